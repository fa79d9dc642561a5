/** Owner and agent credentials for tests that build a kernel in-process. */
import type { Kernel } from '../../src/kernel/kernel.js';
import { newToken } from '../../src/kernel/authority/principals.js';

/** Makes `kernel`'s owner token (once per kernel) and answers the header that carries it. */
export async function ownerHeaders(kernel: Kernel): Promise<Record<string, string>> {
  const known = owners.get(kernel);
  if (known) return { authorization: `Bearer ${known}` };
  const token = newToken('ok_');
  await kernel.principals.setOwnerToken(token);
  owners.set(kernel, token);
  return { authorization: `Bearer ${token}` };
}
const owners = new WeakMap<Kernel, string>();

/** Makes an agent named `name` and answers the header that carries its token. */
export async function agentHeaders(kernel: Kernel, name: string): Promise<Record<string, string>> {
  const made = await kernel.principals.addAgent(name);
  if ('ok' in made) throw new Error(made.message);
  return { authorization: `Bearer ${made.token}` };
}

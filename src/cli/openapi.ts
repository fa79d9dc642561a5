/** `airlock openapi SPEC …` and `airlock catalog build SPEC -o FILE` (door `openapi`, issue #5). */
export async function openapiCommand(_argv: string[]): Promise<number> {
  process.stderr.write('airlock: the openapi door is not built yet\n');
  return 1;
}

export async function catalogCommand(_argv: string[]): Promise<number> {
  process.stderr.write('airlock: the openapi door (and its catalog compiler) is not built yet\n');
  return 1;
}

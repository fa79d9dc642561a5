/** `airlock relay`: the page door alone, WU-style (issue #6). */
export async function relayCommand(_argv: string[]): Promise<number> {
  process.stderr.write('airlock: the page door (relay) is not built yet\n');
  return 1;
}

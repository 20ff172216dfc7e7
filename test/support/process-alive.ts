/** True while a process with this id exists (signal 0 only checks; nothing is sent). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

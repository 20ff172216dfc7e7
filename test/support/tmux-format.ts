/**
 * What tmux prints for `format` when each `#{name}` is `values[name]` (or empty): a stand-in for a
 * tmux server in tests of the parsers, which then see exactly the framing tmux would produce.
 */
export function renderFormat(format: string, values: Partial<Record<string, string>>): string {
  return format.replace(/#\{([^}]+)\}/g, (_m, name: string) => values[name] ?? "");
}

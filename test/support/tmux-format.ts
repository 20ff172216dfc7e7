/** `#{?name,then,else}` whose branches are plain text or simple `#{name}` references. */
const CONDITIONAL = /#\{\?([^,}]+),((?:#\{[^}?]*\}|[^,}#])*),((?:#\{[^}?]*\}|[^,}#])*)\}/g;

/**
 * What tmux prints for `format` when each `#{name}` is `values[name]` (or empty), including the
 * conditionals our formats use (`#{?name,a,b}`: `a` when the value is set and not "0"): a stand-in
 * for a tmux server in tests of the parsers, which then see exactly the framing tmux would produce.
 */
export function renderFormat(format: string, values: Partial<Record<string, string>>): string {
  const simple = (text: string) => text.replace(/#\{([^}]+)\}/g, (_m, name: string) => values[name] ?? "");
  return simple(
    format.replace(CONDITIONAL, (_m, name: string, then: string, otherwise: string) => {
      const value = values[name] ?? "";
      return value !== "" && value !== "0" ? then : otherwise;
    }),
  );
}

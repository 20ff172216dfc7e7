import { html, nothing } from "lit";

/** What a plain text field shows and does. */
export interface PlainInputOptions {
  readonly id: string;
  readonly value: string;
  readonly placeholder: string;
  readonly onInput: (value: string) => void;
  /** Monospace, for commands, branches and refs. */
  readonly mono?: boolean;
  /** The id of a datalist of suggestions. */
  readonly list?: string;
  /** Marks the value as not accepted (aria-invalid). */
  readonly invalid?: boolean;
  /** Enter in the field does this instead of submitting the form. */
  readonly onEnter?: () => void;
}

/**
 * A text field for names, paths and commands: no autocomplete, spell check or capitals, which would
 * change what a person typed into something a machine then refuses. One place, so every such field
 * behaves alike.
 */
export function plainInput(o: PlainInputOptions) {
  return html`<input
    id=${o.id}
    type="text"
    class=${o.mono ? "mono" : nothing}
    list=${o.list ?? nothing}
    autocomplete="off"
    spellcheck="false"
    autocapitalize="off"
    placeholder=${o.placeholder}
    .value=${o.value}
    aria-invalid=${o.invalid === undefined ? nothing : o.invalid ? "true" : "false"}
    @input=${(e: Event) => o.onInput((e.target as HTMLInputElement).value)}
    @keydown=${(e: KeyboardEvent) => {
      if (e.key !== "Enter" || !o.onEnter) return;
      e.preventDefault();
      o.onEnter();
    }}
  />`;
}

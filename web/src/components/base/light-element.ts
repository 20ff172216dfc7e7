import { LitElement } from "lit";

/**
 * The dashboard's components render into the light DOM: xterm.js, input methods and text selection
 * work as they do in any page, one stylesheet themes everything, and assistive technology sees one
 * document. Styling comes from the component's own CSS file, scoped by its tag name.
 */
export class LightElement extends LitElement {
  protected override createRenderRoot(): HTMLElement {
    return this;
  }
}

import { marked } from 'marked';

export function handler() {
  return { html: marked.parse('# Title\n\nSome *emphasis* and `code`.\n\n- a\n- b\n') };
}

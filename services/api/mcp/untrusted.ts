/**
 * Untrusted text (spec/mcp.md §4): another agent's output and every author-written text reach the MCP client
 * inside `<untrusted>…</untrusted>`, with every `<` inside escaped (and `&`, so the escaping is unambiguous), so
 * no text can close the wrapper or pose as the gateway's own words.
 */
function escapeUntrusted(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

export function untrusted(text: string): string {
  return `<untrusted>${escapeUntrusted(text)}</untrusted>`;
}

/** A value shown as JSON inside the wrapper. */
export function untrustedJson(value: unknown): string {
  return untrusted(JSON.stringify(value, null, 2) ?? 'null');
}

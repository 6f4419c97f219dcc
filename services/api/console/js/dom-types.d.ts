/** What may go into an element (dom.js `h`, `fill`): nodes, text, arrays of them (flattened), or nothing. */
export type Child = Node | string | number | boolean | null | undefined | readonly Child[];

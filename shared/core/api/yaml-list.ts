/**
 * Finding the items of a `kind: List` in YAML text without composing it (docs/architecture.md, "Reading a List item
 * by item"): `kubectl get … -o yaml` writes a whole cluster as one document whose `items:` block sequence holds every
 * object. Composing that document at once keeps every YAML node, with its source range, until the end: 2.6 GB for
 * a 59 MB snapshot. Knowing where each item starts lets the reader compose one item at a time instead.
 *
 * The scan is a line scan, exact for block sequences as the `yaml` library reads them: an entry of a block sequence
 * whose `-` stands at column `k` ends at the next line whose first character that is not a space stands at column
 * `k` or less (the library refuses any scalar, block scalar or flow collection continued on such a line: a
 * continuation must be indented more than its parent), except blank and comment-only lines. A line starting with
 * `---` or `...` at column 0 ends the document (YAML 1.2 §9.1.2, forbidden inside any scalar). What the scan cannot
 * tell from lines alone (an `items:` line inside a block scalar at a document's root) is checked by the reader
 * against the composed remainder of the document.
 *
 * Pure: works on text.
 */

/** One entry of a List's `items:` block sequence. */
export interface ListItemSpan {
  /** Offset (UTF-16 code units) of the start of the line holding the entry's `-`. */
  readonly lineStart: number;
  /** Offset of the entry's `-`. */
  readonly dash: number;
  /** Offset where the entry ends: the start of the next entry's line, or of the first line after the sequence. */
  readonly end: number;
  /** 1-based line of {@link lineStart}. */
  readonly line: number;
}

/** A top-level `items:` key with a block sequence value, found by {@link listItemRegions}. */
export interface ListItemRegion {
  /** Offset of the `items` key (column 0 of its line). */
  readonly key: number;
  /** Offset of the first line of the first entry: everything from here to {@link end} belongs to the entries. */
  readonly start: number;
  /** Offset of the first line after the sequence (or the text's length). */
  readonly end: number;
  /** 1-based line of {@link start}. */
  readonly startLine: number;
  /** Number of line breaks from {@link start} to {@link end}. */
  readonly lines: number;
  readonly items: readonly ListItemSpan[];
}

/** `items:` alone on its line at column 0 (a comment may follow). */
const ITEMS_KEY = /^items:[ \t]*(#.*)?\r?$/;

/** True for a line with nothing but spaces or tabs (and a CR). */
function isBlank(line: string): boolean {
  return /^[ \t]*\r?$/.test(line);
}

/** True for a line holding only a comment. */
function isComment(line: string): boolean {
  return /^[ \t]*#/.test(line);
}

/** True for a line starting a document (`---`) or ending one (`...`) at column 0. */
function isDocumentMarker(line: string): boolean {
  return /^(---|\.\.\.)([ \t\r]|$)/.test(line);
}

/** The number of leading spaces of a line. */
function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/** True when the line's first non-space character, at `indent`, is a block sequence indicator (`-` then a space, tab or the end). */
function isEntry(line: string, indent: number): boolean {
  if (line[indent] !== '-') return false;
  const next = line[indent + 1];
  return next === undefined || next === ' ' || next === '\t' || next === '\r';
}

/**
 * Every top-level `items:` key of the text whose value is a block sequence, with the span of each entry, in text
 * order. Empty when there is none, or when the text has a directive line (`%YAML`, `%TAG`): a tag handle declared for
 * the document would not reach an entry composed on its own.
 * @param text YAML text (one or more documents)
 * @returns the regions, entries in order; an entry's span runs from its line's start to the next entry's line
 * @example listItemRegions('apiVersion: v1\nitems:\n- kind: Node\n- kind: Pod\nkind: List\n')[0].items.length // 2
 */
export function listItemRegions(text: string): ListItemRegion[] {
  const regions: ListItemRegion[] = [];
  let state: 'out' | 'await' | 'in' = 'out';
  let key = 0;
  let seqIndent = 0;
  let start = 0;
  let startLine = 0;
  let items: { lineStart: number; dash: number; line: number }[] = [];
  const close = (end: number, endLine: number) => {
    const spans = items.map((item, i): ListItemSpan => ({ ...item, end: items[i + 1]?.lineStart ?? end }));
    regions.push({ key, start, end, startLine, lines: endLine - startLine, items: spans });
    items = [];
  };
  let offset = 0;
  let line = 1;
  while (offset < text.length) {
    const newline = text.indexOf('\n', offset);
    const next = newline === -1 ? text.length : newline + 1;
    const content = text.slice(offset, newline === -1 ? text.length : newline);
    for (let again = true; again; ) {
      again = false;
      if (state === 'out') {
        if (content.startsWith('%')) return [];
        if (ITEMS_KEY.test(content)) {
          state = 'await';
          key = offset;
        }
      } else if (isBlank(content) || isComment(content)) {
        // Blank and comment-only lines belong to whatever they follow.
      } else if (state === 'await') {
        const indent = indentOf(content);
        if (!isDocumentMarker(content) && isEntry(content, indent)) {
          state = 'in';
          seqIndent = indent;
          start = offset;
          startLine = line;
          items.push({ lineStart: offset, dash: offset + indent, line });
        } else {
          state = 'out';
          again = true;
        }
      } else {
        const indent = indentOf(content);
        const marker = isDocumentMarker(content);
        // Deeper lines continue the entry; so do a tab or a shallower indent that is not column 0, which are no
        // entry either: the entry's own composition reports them.
        if (!marker && (indent > seqIndent || content[indent] === '\t' || (indent > 0 && indent < seqIndent))) continue;
        if (!marker && indent === seqIndent && isEntry(content, indent)) {
          items.push({ lineStart: offset, dash: offset + indent, line });
        } else {
          close(offset, line);
          state = 'out';
          again = true;
        }
      }
    }
    offset = next;
    if (newline !== -1) line++;
  }
  if (state === 'in') close(text.length, line);
  return regions;
}

/**
 * Decodes the bytes of a scenario file as YAML text, refusing what is not text: YAML is a Unicode text format (YAML
 * 1.2.2 §5.1, "Character Set": no NUL, §5.2 "Character Encodings"), and Skiff reads it as UTF-8, as kubectl writes
 * it. A binary file (an archive, an image, random bytes) renamed `*.yaml` would otherwise decode to replacement
 * characters and fail much later as "a manifest must be a mapping …, got string", which says nothing about the file.
 */
import { isUtf8 } from 'node:buffer';
import type { ValidationIssue } from '../core/errors.js';

/**
 * The offset of the first byte that does not belong to well-formed UTF-8 (RFC 3629 §4: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or -1 when every byte does.
 * @param bytes the file's content
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    // The lead byte gives the length and the range the first continuation byte must be in (RFC 3629 §4's table).
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > bytes.length) return i;
    const second = bytes[i + 1]!;
    if (second < low || second > high) return i;
    for (let k = 2; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}

/**
 * The bytes of a YAML file as text, or the issue saying why they are not YAML text: a NUL byte, bytes that are not
 * UTF-8, or UTF-16 (a byte order mark). The issue names the 1-based line and column of the first offending byte
 * (the column in characters, as every other issue counts it).
 * @param bytes the file's content
 * @param file the file name to put in the issue
 * @example decodeYamlText(Buffer.from('kind: Pod\n'), 'pod.yaml') // { text: 'kind: Pod\n' }
 */
export function decodeYamlText(bytes: Buffer, file: string): { readonly text: string } | { readonly issue: ValidationIssue } {
  const nul = bytes.indexOf(0);
  const invalid = isUtf8(bytes) ? -1 : firstInvalidUtf8Byte(bytes);
  if (nul === -1 && invalid === -1) return { text: bytes.toString('utf8') };
  const utf16 = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
  if (utf16) return { issue: { file, line: 1, column: 1, message: 'not YAML text Skiff reads: the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8' } };
  const at = nul === -1 ? invalid : invalid === -1 ? nul : Math.min(nul, invalid);
  const lineStart = at === 0 ? 0 : bytes.lastIndexOf(0x0a, at - 1) + 1;
  const line = countNewlines(bytes, at) + 1;
  // Everything before `at` is UTF-8 without NUL, so the line's characters before it decode exactly.
  const column = bytes.subarray(lineStart, at).toString('utf8').length + 1;
  const message =
    at === nul
      ? `not YAML text: a NUL byte at byte offset ${at} (a binary file?); Skiff reads YAML as UTF-8 text`
      : `not YAML text: byte 0x${bytes[at]!.toString(16).padStart(2, '0')} at byte offset ${at} is not UTF-8 (a binary file, or text in another encoding? save it as UTF-8)`;
  return { issue: { file, line, column, message } };
}

/** How many `\n` bytes come before `end`. */
function countNewlines(bytes: Buffer, end: number): number {
  let n = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < end; i = bytes.indexOf(0x0a, i + 1)) n++;
  return n;
}

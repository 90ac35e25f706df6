import { describe, expect, it } from 'vitest';
import { decodeYamlText, firstInvalidUtf8Byte } from '../../shared/sim/yaml-text.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('yaml-text', () => {
  describe('firstInvalidUtf8Byte', () => {
    it.each([
      ['ASCII', bytes(0x61, 0x62), -1],
      ['2-, 3- and 4-byte characters (é, €, 𝄞)', new Uint8Array(Buffer.from('é€𝄞')), -1],
      ['a lone continuation byte', bytes(0x61, 0x80), 1],
      ['an overlong 2-byte form of "/"', bytes(0xc0, 0xaf), 0],
      ['an overlong 3-byte form', bytes(0xe0, 0x80, 0xaf), 0],
      ['a UTF-16 surrogate (U+D800)', bytes(0xed, 0xa0, 0x80), 0],
      ['a code point above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80), 0],
      ['a lead byte that never starts UTF-8 (0xff)', bytes(0x61, 0x62, 0xff), 2],
      ['a character cut short at the end', bytes(0x61, 0xe2, 0x82), 1],
      ['a lead byte followed by ASCII', bytes(0xe2, 0x41, 0x41), 0],
    ])('%s: %s', (_, input, expected) => {
      expect(firstInvalidUtf8Byte(input)).toBe(expected);
    });
  });

  describe('decodeYamlText', () => {
    it('returns UTF-8 text as it is, non-ASCII characters included', () => {
      expect(decodeYamlText(Buffer.from('metadata: {name: café}\n'), 'a.yaml')).toEqual({ text: 'metadata: {name: café}\n' });
    });

    it('names the line and column (in characters) of the first byte that is not UTF-8', () => {
      const text = Buffer.concat([Buffer.from('kind: Pod\nname: é'), Buffer.from([0xb4]), Buffer.from('\n')]);
      expect(decodeYamlText(text, 'a.yaml')).toEqual({
        issue: { file: 'a.yaml', line: 2, column: 8, message: 'not YAML text: byte 0xb4 at byte offset 18 is not UTF-8 (a binary file, or text in another encoding? save it as UTF-8)' },
      });
    });

    it('refuses a NUL byte, which YAML does not allow, even in otherwise valid UTF-8; the first problem is named', () => {
      expect(decodeYamlText(Buffer.from([0x00, 0xff]), 'b.yaml')).toEqual({
        issue: { file: 'b.yaml', line: 1, column: 1, message: 'not YAML text: a NUL byte at byte offset 0 (a binary file?); Skiff reads YAML as UTF-8 text' },
      });
      expect(decodeYamlText(Buffer.from([0x61, 0x0a, 0xff, 0x00]), 'b.yaml')).toMatchObject({ issue: { line: 2, column: 1, message: expect.stringMatching(/^not YAML text: byte 0xff at byte offset 2 /) } });
    });

    it('says a UTF-16 file is UTF-16 and asks for UTF-8', () => {
      const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('kind: Pod\n', 'utf16le')]);
      expect(decodeYamlText(utf16, 'w.yaml')).toEqual({
        issue: { file: 'w.yaml', line: 1, column: 1, message: 'not YAML text Skiff reads: the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8' },
      });
    });
  });
});

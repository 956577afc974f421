import { describe, expect, it } from 'vitest';
import { clipUtf8, fitStem, isUserPath, modelTooltip, splitForMiddleEllipsis, utf8Length } from '../file-names.js';
import { shortHash } from '../engine-name.js';

/** Round-trips through UTF-8: half a surrogate pair would come back as U+FFFD. */
const wellFormed = (s: string) => new TextDecoder().decode(new TextEncoder().encode(s)) === s && !s.includes('\uFFFD');

describe('clipUtf8', () => {
  it('counts bytes, not characters', () => {
    expect(utf8Length('abc')).toBe(3);
    expect(utf8Length('模型')).toBe(6);
    expect(utf8Length('😀')).toBe(4);
    expect(clipUtf8('abcdef', 4)).toBe('abcd');
    expect(clipUtf8('abc', 3)).toBe('abc');
  });

  it('never cuts a multi-byte character: CJK (3 bytes) and an emoji (a surrogate pair, 4 bytes)', () => {
    expect(clipUtf8('模型模型', 8)).toBe('模型'); // 8 bytes would end inside the third
    expect(clipUtf8('a😀😀', 7)).toBe('a😀');
    expect(clipUtf8('😀', 3)).toBe('');
    for (let n = 0; n < 20; n++) expect(wellFormed(clipUtf8('a模😀é模😀', n))).toBe(true);
  });

  it('keeps an emoji with its modifiers and a letter with its accent together', () => {
    const family = '👨‍👩‍👧'; // three emoji joined by ZWJ: 18 bytes
    expect(clipUtf8(`${family}x`, 17)).toBe('');
    expect(clipUtf8(`x${family}`, 18)).toBe('x');
    expect(clipUtf8('ae\u0301', 2)).toBe('a'); // not "ae" without its combining acute
    expect(clipUtf8('👍🏽👍🏽', 9)).toBe('👍🏽');
  });
});

describe('fitStem', () => {
  it('leaves a stem that fits exactly as it is', () => {
    expect(fitStem('a'.repeat(200), 200, 'deadbeef')).toBe('a'.repeat(200));
    expect(fitStem('模'.repeat(66), 198, 'deadbeef')).toBe('模'.repeat(66));
  });

  it('one byte over: cut and marked with the hash, within the limit', () => {
    const s = fitStem('a'.repeat(201), 200, 'deadbeef');
    expect(s).toBe(`${'a'.repeat(191)}-deadbeef`);
    expect(utf8Length(s)).toBe(200);
  });

  it('CJK and emoji stems are cut between characters', () => {
    const cjk = fitStem('模'.repeat(100), 200, '01234567');
    expect(utf8Length(cjk)).toBeLessThanOrEqual(200);
    expect(cjk).toBe(`${'模'.repeat(63)}-01234567`); // 63*3 + 9 = 198; a 64th would make 201
    const emoji = fitStem('😀'.repeat(80), 101, '01234567');
    expect(emoji).toBe(`${'😀'.repeat(23)}-01234567`); // 92 + 9 = 101
    expect(wellFormed(emoji)).toBe(true);
  });

  it('does not leave a separator before the mark', () => {
    expect(fitStem(`${'a'.repeat(10)}. -${'b'.repeat(20)}`, 22, '01234567')).toBe('aaaaaaaaaa-01234567');
  });
});

describe('splitForMiddleEllipsis', () => {
  it('keeps the extension and the last characters of the stem in the tail', () => {
    expect(splitForMiddleEllipsis('resnet50-imagenet-finetuned-v2.onnx')).toEqual({ head: 'resnet50-imagenet-finetu', tail: 'ned-v2.onnx' });
    expect(splitForMiddleEllipsis('small.onnx')).toEqual({ head: '', tail: 'small.onnx' });
    const { head, tail } = splitForMiddleEllipsis(`${'模'.repeat(100)}.onnx`);
    expect(tail).toBe('模模模.onnx'); // three wide characters: the width of six narrow ones
    expect(head + tail).toBe(`${'模'.repeat(100)}.onnx`);
  });

  it('splits between whole characters, and takes no absurd "extension"', () => {
    const { head, tail } = splitForMiddleEllipsis('a'.repeat(20) + '👨‍👩‍👧');
    expect(tail).toBe('aaaa👨‍👩‍👧'); // the family is one (wide) character
    expect(head).toBe('a'.repeat(16));
    expect(splitForMiddleEllipsis('v1.0-a-very-long-suffix-without-an-extension').tail).toBe('ension');
  });
});

describe('model tooltips', () => {
  const upload = '/tmp/tbs-uploads-1234-5678-AbC123/upload-0123456789abcdef01234567.onnx';
  it('in the browser, an upload path means nothing to the user: the name only', () => {
    expect(isUserPath(upload, 'resnet.onnx', 'web')).toBe(false);
    expect(modelTooltip(upload, 'resnet.onnx', 'web')).toBe('resnet.onnx');
  });
  it('a real path (the desktop app, or a model named by its server path) stays in the tooltip', () => {
    expect(modelTooltip('/home/me/models/resnet.onnx', 'resnet.onnx', 'electron')).toBe('resnet.onnx\n/home/me/models/resnet.onnx');
    expect(modelTooltip('/srv/models/resnet.onnx', 'resnet.onnx', 'web')).toBe('resnet.onnx\n/srv/models/resnet.onnx');
  });
});

describe('shortHash', () => {
  it('is 32-bit FNV-1a of the UTF-8 bytes (published test vectors), as 8 hex digits', () => {
    expect(shortHash('')).toBe('811c9dc5');
    expect(shortHash('a')).toBe('e40c292c');
    expect(shortHash('foobar')).toBe('bf9cf968');
    expect(shortHash('模型')).toMatch(/^[0-9a-f]{8}$/);
    expect(shortHash('模型')).not.toBe(shortHash('模形'));
  });
});

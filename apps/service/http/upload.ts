// Multipart uploads (busboy), streamed straight to a file in the server's upload directory. The
// stored name is generated: the client's file name is only ever shown, never used as a path.
// Anything that goes wrong (limit, abort, malformed body) removes the partial file.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type * as http from 'node:http';
import busboy from 'busboy';
import { ErrorResponse } from './errors.js';
import { discardRest } from './json-body.js';

export const UPLOAD_LIMIT_BYTES = 2 * 1024 ** 3;
const FIELD_LIMIT_BYTES = 1024 * 1024;

export interface UploadedFile {
  path: string;
  /** The client's name for it, for display only. */
  displayName: string;
  bytes: number;
}

export interface MultipartResult {
  file?: UploadedFile;
  fields: Record<string, string>;
}

export interface MultipartOptions {
  uploadDir: string;
  /** The one file field accepted. */
  fileField: string;
  maxFileBytes?: number;
}

export function receiveMultipart(req: http.IncomingMessage, opts: MultipartOptions): Promise<MultipartResult> {
  const maxFileBytes = opts.maxFileBytes ?? UPLOAD_LIMIT_BYTES;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxFileBytes + FIELD_LIMIT_BYTES * 2) {
    discardRest(req);
    return Promise.reject(tooLarge(maxFileBytes));
  }

  return new Promise<MultipartResult>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Browsers send non-ASCII file names as raw UTF-8, not RFC 2231 encoded.
        defParamCharset: 'utf8',
        limits: { fileSize: maxFileBytes, files: 1, fields: 16, parts: 17, fieldSize: FIELD_LIMIT_BYTES },
      });
    } catch (e) {
      discardRest(req);
      reject(new ErrorResponse('bad_input', `malformed multipart request: ${(e as Error).message}`));
      return;
    }

    const fields: Record<string, string> = {};
    let file: UploadedFile | undefined;
    let fileWrite: Promise<void> | undefined;
    let fileSink: fs.WriteStream | undefined;
    let failure: ErrorResponse | undefined;
    let settled = false;

    const fail = (err: ErrorResponse) => {
      if (failure) return;
      failure = err;
      req.unpipe(parser);
      // Once unpiped, busboy never ends the file stream; destroying the sink settles the write.
      fileSink?.destroy();
      discardRest(req);
      finish();
    };

    const finish = () => {
      if (settled) return;
      // The file must be fully on disk (or removed) before anyone looks at it.
      void (fileWrite ?? Promise.resolve()).then(() => {
        if (settled) return;
        settled = true;
        if (failure) {
          // Removed before the error goes out, so a client never sees a 4xx while a partial file lingers.
          const err = failure;
          void (file ? fs.promises.rm(file.path, { force: true }) : Promise.resolve()).catch(() => undefined).then(() => reject(err));
        } else {
          resolve({ file, fields });
        }
      });
    };

    parser.on('file', (name, stream, info) => {
      if (name !== opts.fileField || file || failure) {
        stream.resume();
        fail(new ErrorResponse('bad_input', `unexpected file field "${name}": send the model as the one file field "${opts.fileField}"`));
        return;
      }
      const stored = path.join(opts.uploadDir, `upload-${crypto.randomBytes(12).toString('hex')}.onnx`);
      const entry: UploadedFile = { path: stored, displayName: displayName(info.filename), bytes: 0 };
      file = entry;
      stream.on('data', (chunk: Buffer) => {
        entry.bytes += chunk.length;
      });
      stream.on('limit', () => fail(tooLarge(maxFileBytes)));
      const sink = fs.createWriteStream(stored, { flags: 'wx', mode: 0o600 });
      fileSink = sink;
      // 'close' comes after a finished write and after a destroy alike: the one signal to wait on.
      fileWrite = new Promise<void>((done) => sink.on('close', () => done()));
      pipeline(stream, sink).catch((e: Error) => {
        if (!failure) fail(new ErrorResponse('internal', `could not store the upload: ${e.message}`));
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(new ErrorResponse('too_large', `field "${name}" exceeds ${FIELD_LIMIT_BYTES} bytes`));
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(new ErrorResponse('bad_input', `only one file may be uploaded (field "${opts.fileField}")`)));
    parser.on('partsLimit', () => fail(new ErrorResponse('bad_input', 'too many parts in the multipart body')));
    parser.on('fieldsLimit', () => fail(new ErrorResponse('bad_input', 'too many fields in the multipart body')));
    parser.on('error', (e: Error) => fail(new ErrorResponse('bad_input', `malformed multipart body: ${e.message}`)));
    parser.on('close', finish);
    // A client that goes away mid-upload must not leave a partial file behind.
    req.on('close', () => {
      if (!req.complete && !settled) fail(new ErrorResponse('bad_input', 'upload aborted by the client'));
    });
    req.pipe(parser);
  });
}

function tooLarge(limit: number): ErrorResponse {
  return new ErrorResponse('too_large', `upload exceeds ${limit} bytes`, { Connection: 'close' });
}

/**
 * The client's file name as it may be shown: the last path segment only (Windows browsers and
 * curl may send a whole path), without control characters (C0, DEL, C1) or bidi overrides that
 * would make a name display as another, at most 255 characters. It is never used as a path.
 */
export function displayName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  const short = Array.from(clean).slice(0, 255).join(''); // whole code points: no half surrogate
  return short === '' || short === '.' || short === '..' ? 'model.onnx' : short;
}

// The /api routes: each takes the parsed request, talks to the build service and answers JSON
// (or a stream). Errors are thrown as ErrorResponse/ServiceError and turned into JSON by the server.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as http from 'node:http';
import type { BuildServiceApi } from '../api.js';
import { BackendChoice, type BuildRecord } from '../../shared/protocol.js';
import { isRecordedEngine } from '../engine-identity.js';
import { ErrorResponse, sendJson } from './errors.js';
import { isJsonRequest, isMultipartRequest, readJsonBody } from './json-body.js';
import { checkClientPath } from './paths.js';
import { checkEngine } from '../engine-check.js';
import { compareSources } from '../compare-sources.js';
import { readManifest } from '../engine-manifest-file.js';
import { buildLayerReport } from '../engine-explain.js';
import { ModelPathBody, multipartFieldsToBody, parseBody, toStartBuildInput } from './requests.js';
import { openEventStream, parseLastEventId } from './sse.js';
import { openFarmStream } from './farm-sse.js';
import { receiveMultipart, type UploadedFile } from './upload.js';
import { apiPath, apiPattern, type ApiPathName } from '../../shared/http-paths.js';

export interface RouteContext {
  service: BuildServiceApi;
  uploadDir: string;
  maxUploadBytes?: number;
  heartbeatMs: number;
  openStreams: Set<() => void>;
  /** Events a slow event-stream client may have waiting before it is reset (service default). */
  streamMaxBacklog?: number;
  /** A stream client that reads nothing for this long while a write waits is cut off. */
  streamStallCutMs?: number;
  /** Stored upload path → the client's file name, so a build of an earlier upload shows that name. */
  uploadNames: Map<string, string>;
}

export interface RouteRequest {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  params: string[];
  query: URLSearchParams;
  ctx: RouteContext;
}

type Handler = (r: RouteRequest) => Promise<void> | void;

export interface Route {
  /** The path's name in the one table of paths (apps/shared/http-paths.ts). */
  path: ApiPathName;
  pattern: RegExp;
  methods: Partial<Record<string, Handler>>;
}

const FINAL_STATES = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);

const route = (path: ApiPathName, methods: Route['methods']): Route => ({ path, pattern: apiPattern(path), methods });

export const ROUTES: Route[] = [
  route('backends', { GET: listBackends }),
  route('buildRoutes', { GET: readBuildRoutes }),
  route('models', { POST: openModel }),
  route('builds', { GET: listBuilds, POST: startBuild }),
  route('build', { GET: getBuild }),
  route('buildEvents', { GET: streamEvents }),
  route('buildView', { GET: getView }),
  route('buildCancel', { POST: cancelBuild }),
  route('buildLayers', { GET: getLayers }),
  route('buildEngine', { GET: downloadEngine, HEAD: downloadEngine }),
  route('buildManifest', { GET: getManifest }),
  route('compare', { GET: compareRoute }),
  route('engines', { GET: listEngines }),
  route('farm', { GET: farmStatus }),
  route('farmEvents', { GET: farmEvents }),
  route('enginesDelete', { POST: deleteEngines }),
  route('enginesCheck', { GET: checkEngineRoute }),
];

/** The build farm has no default output folder of its own: it lists no engines. */
function engineStore(ctx: RouteContext): Required<Pick<BuildServiceApi, 'listEngines' | 'deleteEngines'>> {
  const { listEngines, deleteEngines } = ctx.service;
  if (!listEngines || !deleteEngines) throw new ErrorResponse('not_found', 'this server keeps no engine folder of its own (build farm)');
  return { listEngines: listEngines.bind(ctx.service), deleteEngines: deleteEngines.bind(ctx.service) };
}

async function farmStatus({ res, ctx }: RouteRequest): Promise<void> {
  if (!ctx.service.farmStatus) throw new ErrorResponse('not_found', 'this server runs builds itself, not on a build farm (start it with --queue)');
  sendJson(res, 200, await ctx.service.farmStatus());
}

function farmEvents({ res, ctx }: RouteRequest): void {
  openFarmStream(res, ctx.service, { heartbeatMs: ctx.heartbeatMs, open: ctx.openStreams });
}

function listEngines({ res, ctx }: RouteRequest): void {
  sendJson(res, 200, engineStore(ctx).listEngines());
}

async function deleteEngines({ req, res, ctx }: RouteRequest): Promise<void> {
  const store = engineStore(ctx);
  if (!isJsonRequest(req)) {
    throw new ErrorResponse('bad_input', `expected Content-Type application/json, got "${req.headers['content-type'] ?? 'none'}"`);
  }
  const body = await readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ErrorResponse('bad_input', 'body must be a JSON object { names: [...] }');
  sendJson(res, 200, store.deleteEngines((body as { names?: unknown }).names as string[]));
}

/**
 * GET /api/engines/check?engine=<path>[&model=<path>][&options=<JSON build options>]: the same
 * check as `trt-build-studio check` (engine-check.ts). A bare file name is looked up among the
 * engines in the server's output folder (what GET /api/engines lists).
 */
async function checkEngineRoute({ res, query, ctx }: RouteRequest): Promise<void> {
  const engine = query.get('engine');
  if (!engine) throw new ErrorResponse('bad_input', 'engine: give the engine to check (?engine=<path or listed name>)');
  let enginePath: string;
  if (!/[\\/]/.test(engine) && ctx.service.engineFolder) enginePath = path.join(ctx.service.engineFolder(), engine);
  else enginePath = checkClientPath(engine, 'engine');
  const model = query.get('model');
  const rawOptions = query.get('options');
  let options: unknown;
  if (rawOptions !== null) {
    try {
      options = JSON.parse(rawOptions);
    } catch {
      throw new ErrorResponse('bad_input', 'options: not JSON (give the build options as a JSON object)');
    }
  }
  const result = await checkEngine({ enginePath, modelPath: model === null ? undefined : checkClientPath(model, 'model'), options }, () => ctx.service.listBackends());
  sendJson(res, 200, result);
}

async function listBackends({ res, ctx }: RouteRequest): Promise<void> {
  sendJson(res, 200, await ctx.service.listBackends());
}

/**
 * GET /api/backends/build-routes[?backend=auto|tensorrt|simulated]: the knob database of that
 * backend (TensorRT 11.1+), read from the library when no earlier read left it on disk (the
 * options form's route picker asks this; it takes a builder, so seconds on a real install).
 * Answers { backend, version, source, json } with `json` as getAllBuildRoutes() returned it.
 */
async function readBuildRoutes({ res, query, ctx }: RouteRequest): Promise<void> {
  if (!ctx.service.readBuildRoutes) throw new ErrorResponse('not_found', 'this server cannot read build routes from a library (build farm)');
  const raw = query.get('backend') ?? 'auto';
  const choice = BackendChoice.safeParse(raw);
  if (!choice.success) throw new ErrorResponse('bad_input', `backend must be auto, tensorrt or simulated, got "${raw}"`);
  sendJson(res, 200, await ctx.service.readBuildRoutes(choice.data));
}

async function openModel({ req, res, ctx }: RouteRequest): Promise<void> {
  if (isMultipartRequest(req)) {
    const upload = await requireUpload(req, ctx);
    try {
      const summary = { ...(await ctx.service.inspectModel(upload.path)), fileName: upload.displayName };
      refuseExternalData(summary, upload);
      ctx.uploadNames.set(upload.path, upload.displayName);
      sendJson(res, 201, { path: upload.path, displayName: upload.displayName, fileName: upload.displayName, summary });
    } catch (e) {
      // A model that cannot be read is of no use to anyone: do not keep it.
      await fs.promises.rm(upload.path, { force: true });
      throw nameUploadInMessage(e, upload);
    }
    return;
  }
  requireJson(req);
  const body = parseBody(ModelPathBody, await readJsonBody(req));
  const modelPath = checkClientPath(body.path, 'path');
  const summary = await ctx.service.inspectModel(modelPath);
  sendJson(res, 201, { path: modelPath, displayName: summary.fileName, fileName: summary.fileName, summary });
}

async function startBuild({ req, res, ctx }: RouteRequest): Promise<void> {
  let input;
  let upload: UploadedFile | undefined;
  if (isMultipartRequest(req)) {
    const { file, fields } = await receiveMultipart(req, { uploadDir: ctx.uploadDir, fileField: 'model', maxFileBytes: ctx.maxUploadBytes });
    upload = file;
    try {
      if (!file) throw new ErrorResponse('bad_input', 'multipart body has no file field "model"');
      if ('modelPath' in fields) throw new ErrorResponse('bad_input', 'modelPath: give either an uploaded "model" file or a modelPath, not both');
      input = { ...toStartBuildInput(multipartFieldsToBody(fields), file.path), modelDisplayName: file.displayName };
      refuseExternalData(await ctx.service.inspectModel(file.path), file);
    } catch (e) {
      if (!upload) throw e;
      await fs.promises.rm(upload.path, { force: true });
      throw nameUploadInMessage(e, upload);
    }
  } else {
    requireJson(req);
    input = toStartBuildInput(await readJsonBody(req));
    const shown = ctx.uploadNames.get(input.modelPath);
    if (shown !== undefined) input = { ...input, modelDisplayName: shown };
  }
  try {
    const { targets, ...single } = input;
    if ((targets || single.target || single.retries !== undefined) && !ctx.service.startMatrix) {
      throw new ErrorResponse(
        'bad_input',
        `${targets ? 'targets' : single.target ? 'target' : 'retries'}: only a build farm routes builds (start serve with --queue redis://host:port)`,
      );
    }
    if (targets) {
      const records = await ctx.service.startMatrix!({ ...single, targets });
      sendJson(res, 201, { ids: records.map((r) => r.id) });
      return;
    }
    const record = await ctx.service.startBuild(single);
    sendJson(res, 201, { id: record.id }, { Location: apiPath('build', { id: record.id }) });
  } catch (e) {
    if (!upload) throw e;
    await fs.promises.rm(upload.path, { force: true });
    throw nameUploadInMessage(e, upload);
  }
}

/**
 * A model whose weights live in files beside it (ONNX external data, for models over 2 GiB) cannot
 * be built from an upload: only the .onnx file travels, and its weights stay on the user's disk.
 * Said at once, instead of a build that fails on the missing files.
 */
function refuseExternalData(summary: { externalData: { files: string[] } }, upload: UploadedFile): void {
  const files = summary.externalData.files;
  if (files.length === 0) return;
  const shown = files.slice(0, 3).join(', ') + (files.length > 3 ? `, … (${files.length} in all)` : '');
  throw new ErrorResponse(
    'bad_model',
    `"${upload.displayName}" keeps its weights in ${files.length === 1 ? 'an external data file' : `${files.length} external data files`} (${shown}), ` +
      'which an upload cannot bring along: open the model by its path on the machine that runs the service instead',
  );
}

/** The user knows the file by the name they uploaded, not by our generated one. */
function nameUploadInMessage(err: unknown, upload: UploadedFile): unknown {
  if (!(err instanceof Error)) return err;
  const shown = `"${upload.displayName}" (uploaded)`;
  // The full path first, then the bare generated name some messages use.
  err.message = err.message.split(upload.path).join(shown).split(path.basename(upload.path)).join(shown);
  return err;
}

function listBuilds({ res, ctx }: RouteRequest): void {
  sendJson(res, 200, ctx.service.listBuilds());
}

function getBuild({ res, params, ctx }: RouteRequest): void {
  const record = knownBuild(ctx, params[0]);
  sendJson(res, 200, record, detailsHeader(ctx, record.id));
}

/** Marks the summary of a build whose event log and phase tree were evicted (see docs/http-api.md). */
function detailsHeader(ctx: { service: BuildServiceApi }, id: string): Record<string, string> {
  return ctx.service.detailsEvicted?.(id) ? { 'Build-Details': 'evicted' } : {};
}

/** The build view's complete snapshot: what a client rebuilds its picture of the build from. */
function getView({ res, params, ctx }: RouteRequest): void {
  const view = ctx.service.getView?.(params[0]);
  if (!view) throw new ErrorResponse('not_found', `unknown build "${params[0]}"`);
  sendJson(res, 200, view, detailsHeader(ctx, params[0]));
}

function streamEvents({ req, res, params, query, ctx }: RouteRequest): void {
  const afterSeq = parseLastEventId(req, query);
  openEventStream(res, ctx.service, params[0], afterSeq, {
    heartbeatMs: ctx.heartbeatMs,
    open: ctx.openStreams,
    maxBacklog: ctx.streamMaxBacklog,
    stallCutMs: ctx.streamStallCutMs,
  });
}

function cancelBuild({ res, params, ctx }: RouteRequest): void {
  const record = knownBuild(ctx, params[0]);
  if (FINAL_STATES.has(record.state)) {
    throw new ErrorResponse('conflict', `build ${record.id} has already finished (${record.state})`);
  }
  if (!ctx.service.cancelBuild(record.id, 'user')) {
    // It finished between our look and the cancel.
    const now = knownBuild(ctx, record.id);
    throw new ErrorResponse('conflict', `build ${record.id} has already finished (${now.state})`);
  }
  sendJson(res, 202, { id: record.id, state: knownBuild(ctx, record.id).state });
}

/** GET /api/builds/{id}/manifest: the manifest beside the build's engine (docs/engines.md). */
function getManifest({ res, params, ctx }: RouteRequest): void {
  const record = knownBuild(ctx, params[0]);
  const file = record.state === 'succeeded' ? ctx.service.enginePath(record.id) : undefined;
  if (!file) throw new ErrorResponse('not_found', `build ${record.id} has no engine (it is ${record.state}), so no manifest`);
  const read = readManifest(file);
  if (!read.ok) throw new ErrorResponse('not_found', read.message);
  sendJson(res, 200, read.manifest);
}

/**
 * GET /api/builds/{id}/layers: the build's saved layer information (IEngineInspector's JSON, read
 * by apps/shared/engine-layers.ts) and the precision check against what the build asked for;
 * 404 when the build has none (engine-explain.ts).
 */
function getLayers({ res, params, ctx }: RouteRequest): void {
  const { layers, summary, io, schema, detailed, check } = buildLayerReport(ctx.service, params[0]!);
  sendJson(res, 200, { schema, detailed, layers, summary, io, ...(check ? { check } : {}) });
}

/**
 * GET /api/compare?a=<build id>&b=<build id>: two builds of this server side by side (the same
 * comparison as `trt-build-studio compare`), from the manifests beside their engines.
 */
async function compareRoute({ res, query, ctx }: RouteRequest): Promise<void> {
  const engineOf = (key: 'a' | 'b'): string => {
    const id = query.get(key);
    if (!id) throw new ErrorResponse('bad_input', `${key}: give two build ids (?a=<id>&b=<id>)`);
    const record = knownBuild(ctx, id);
    const file = record.state === 'succeeded' ? ctx.service.enginePath(record.id) : undefined;
    if (!file) throw new ErrorResponse('conflict', `build ${record.id} has no engine to compare (it is ${record.state})`);
    return file;
  };
  sendJson(res, 200, await compareSources(engineOf('a'), engineOf('b'), []));
}

async function downloadEngine({ req, res, params, ctx }: RouteRequest): Promise<void> {
  const record = knownBuild(ctx, params[0]);
  if (record.state !== 'succeeded') {
    throw new ErrorResponse('conflict', `build ${record.id} has no engine: it is ${record.state}`);
  }
  const file = ctx.service.enginePath(record.id);
  let handle: fs.promises.FileHandle | undefined;
  try {
    if (!file) throw new Error('no path');
    // Open first, then stat the open file: the length we announce is the length we send.
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
    const stat = await handle.stat();
    // The file opened is the one served: it must still be the one the build wrote.
    const recorded = ctx.service.engineRecord?.(record.id);
    if (ctx.service.engineRecord && !isRecordedEngine(stat, recorded)) throw new Error('replaced');
    if (!stat.isFile()) throw new Error('not a regular file');
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': stat.size,
      'Content-Disposition': contentDisposition(downloadName(record, file)),
      'Cache-Control': 'no-store',
    });
  } catch {
    await handle?.close();
    throw new ErrorResponse('not_found', `the engine file of build ${record.id} no longer exists, or was replaced after the build wrote it`);
  }
  if (req.method === 'HEAD') {
    await handle.close();
    res.end();
    return;
  }
  const stream = handle.createReadStream();
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

function knownBuild(ctx: RouteContext, id: string) {
  const record = ctx.service.getBuild(id);
  if (!record) throw new ErrorResponse('not_found', `unknown build "${id}"`);
  return record;
}

function requireJson(req: http.IncomingMessage): void {
  if (!isJsonRequest(req)) {
    throw new ErrorResponse('bad_input', `expected Content-Type application/json or multipart/form-data, got "${req.headers['content-type'] ?? 'none'}"`);
  }
}

async function requireUpload(req: http.IncomingMessage, ctx: RouteContext): Promise<UploadedFile> {
  const { file } = await receiveMultipart(req, { uploadDir: ctx.uploadDir, fileField: 'model', maxFileBytes: ctx.maxUploadBytes });
  if (!file) throw new ErrorResponse('bad_input', 'multipart body has no file field "model"');
  return file;
}

/**
 * The engine's name for the download. An engine the service named after an upload's stored name
 * (`upload-<random>-<id>.engine`) is offered under the user's model name instead
 * (`resnet 50-<id>.engine`); a path the client chose keeps its own name.
 */
function downloadName(record: BuildRecord, file: string): string {
  const base = path.basename(file);
  const storedStem = path.basename(record.modelPath).replace(/\.onnx$/i, '');
  const shown = record.model?.fileName;
  if (!shown || shown === path.basename(record.modelPath) || !base.startsWith(`${storedStem}-`)) return base;
  return `${shown.replace(/\.onnx$/i, '')}${base.slice(storedStem.length)}`;
}

/** ASCII fallback plus RFC 6266 / RFC 5987 form, so non-ASCII engine names survive without header injection. */
function contentDisposition(name: string): string {
  // '%' too: some user agents percent-decode the plain filename parameter.
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export { Engine, errorResponse, responseHeaders } from './engine';
export type { EngineOptions, EngineStats, InvokeRequest, InvokeResponse } from './engine';
export { ServiceError } from './errors';
export type { ErrorCode } from './errors';
export { DEFAULT_LIMITS } from './limits';
export type { Limits } from './limits';
export type { FunctionManifest, FunctionSpec, RuntimeName } from './manifest';
export type { BundleSource } from './bundle';

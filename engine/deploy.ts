import type { BundleSource } from './bundle';
import type { DeployRequest } from './engine-types';
import { ServiceError } from './errors';
import { publishDeploy } from './events';
import type { Limits } from './limits';
import { validateSpec, type FunctionManifest, type RuntimeName } from './manifest';
import type { Instance, InstanceServices, Runtime } from './runtime';
import type { Catalog } from './store/catalog';
import { deployVersion } from './store/pipeline';
import { functionsExceeded, type DeployQuota } from './store/quota';
import type { Store } from './store/store';
import { checkPercent } from './store/traffic';

/** What a deploy needs of the engine. */
export interface DeployParts {
  limits: Limits;
  catalog: Catalog;
  store: Store;
  runtimeFor(name: RuntimeName): Runtime;
  /** The services a deploy's check loads the candidate with. */
  servicesFor(manifest: FunctionManifest): InstanceServices;
  /** Keeps the instance the check loaded as the published version's first warm instance (or disposes it). */
  adopt(manifest: FunctionManifest, instance: Instance): Promise<void>;
}

/** The deploy path: the request checked, the account's quota, then the pipeline (engine/store/pipeline.ts) with the runtime's check of the code. */
export class Deployer {
  constructor(private readonly parts: DeployParts) {}

  async deploy(accountId: string, specInput: unknown, source: BundleSource, request: DeployRequest = {}): Promise<FunctionManifest> {
    const started = performance.now();
    try {
      const manifest = await this.deployVersion(accountId, specInput, source, request);
      publishDeploy(accountId, started, { manifest });
      return manifest;
    } catch (err) {
      publishDeploy(accountId, started, { error: err, spec: specInput });
      throw err;
    }
  }

  private async deployVersion(accountId: string, specInput: unknown, source: BundleSource, request: DeployRequest): Promise<FunctionManifest> {
    if (!this.parts.catalog.hasAccount(accountId)) throw new ServiceError('ERR_NOT_FOUND', `no account ${accountId}`);
    const spec = validateSpec(specInput, this.parts.limits);
    const percent = request.percent === undefined ? undefined : checkPercent(request.percent);
    if (request.message !== undefined && (typeof request.message !== 'string' || request.message.length > 1000)) {
      throw new ServiceError('ERR_BAD_REQUEST', 'message must be a string of at most 1,000 characters');
    }
    const runtime = this.parts.runtimeFor(spec.runtime);
    const own = this.parts.catalog.account(accountId)?.limits ?? {};
    const quota: DeployQuota = { maxFunctions: own.maxFunctions ?? this.parts.limits.accountMaxFunctions, maxCodeBytes: own.maxCodeBytes ?? this.parts.limits.accountMaxCodeBytes };
    // One function too many is refused before its bundle is unpacked; the store checks again, under the account's lock.
    const functions = this.parts.catalog.list(accountId).length;
    if (!this.parts.catalog.function(accountId, spec.name) && functions >= quota.maxFunctions) throw functionsExceeded(accountId, functions, quota.maxFunctions);
    // What the check learns is kept in the manifest it checked, which the store then writes; the
    // instance it loaded serves the version once published, and is dropped if the deploy fails.
    const checked: { instance?: Instance } = {};
    const check = async (candidate: FunctionManifest, codeDir: string) => {
      const result = await runtime.validate(candidate, codeDir, this.parts.servicesFor(candidate));
      candidate.style = result.style;
      checked.instance = result.instance;
    };
    try {
      const published = await deployVersion(this.parts.store, accountId, spec, source, check, {
        message: request.message || undefined,
        percent,
        quota,
        keepVersions: own.keepVersions === undefined ? undefined : Math.max(1, Math.floor(own.keepVersions)),
      });
      // Before the deploy answers: the caller's next call finds the instance warm.
      const instance = checked.instance;
      checked.instance = undefined;
      if (instance) await this.parts.adopt(published, instance);
      return published;
    } finally {
      checked.instance?.dispose();
    }
  }
}

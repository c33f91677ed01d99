import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { materializeBundle, type BundleLimits, type BundleSource } from '../bundle';
import type { FunctionManifest, FunctionSpec } from '../manifest';
import type { DeployCheck, DeployOptions, StagedVersion, Store } from './store';
import { trafficAfterDeploy } from './traffic';
import { describeVersion } from './version';

/**
 * The deploy pipeline, written once for every store: the upload is unpacked aside (`stage`, in the
 * folder the store names), described and checked, then the store publishes it (its only part: a
 * rename under locks for the data directory, one transaction for PostgreSQL), and what is left
 * aside is removed whatever happened. Any error before the publish leaves the previous version
 * serving.
 */
export async function deployVersion(store: Store, account: string, spec: FunctionSpec, source: BundleSource, check: DeployCheck, options: DeployOptions = {}): Promise<FunctionManifest> {
  const staged = await stageVersion(await store.stagingRoot(account, spec.name), account, spec, source, options.limits, options.message);
  try {
    await check(staged.manifest, staged.codeDir);
    return await store.publish(staged, (version, current) => trafficAfterDeploy(current, version, options.percent), { quota: options.quota, keepVersions: options.keepVersions });
  } finally {
    await discardStaged(staged);
  }
}

/** Unpacks a bundle into a new folder of `root` and describes it as a candidate version (numbered 0). Publishes nothing. */
export async function stageVersion(root: string, account: string, spec: FunctionSpec, source: BundleSource, limits: BundleLimits | undefined, message: string | undefined): Promise<StagedVersion> {
  // A dot: the data directory's start-up clean removes what a crash left here, and no listing reads it as a version.
  const dir = path.join(root, `.staging-${randomBytes(6).toString('hex')}`);
  const codeDir = path.join(dir, 'code');
  await fsp.mkdir(codeDir, { recursive: true });
  try {
    await materializeBundle(source, codeDir, limits);
    return { manifest: await describeVersion(codeDir, account, spec, message), codeDir, dir };
  } catch (err) {
    await discardStaged({ dir });
    throw err;
  }
}

/** Removes a staged folder (a no-op once a publish has moved it into place). */
export async function discardStaged(staged: Pick<StagedVersion, 'dir'>): Promise<void> {
  await fsp.rm(staged.dir, { recursive: true, force: true });
}

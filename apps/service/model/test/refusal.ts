// What the model reader refuses a file with: the ServiceError, for a test to look at its code and
// message (shared by the reader's test files).
import { expect } from 'vitest';
import { ServiceError } from '../../api.js';
import { readModel } from '../model-reader.js';

export async function failure(p: string, opts?: Parameters<typeof readModel>[1]): Promise<ServiceError> {
  try {
    await readModel(p, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error(`expected ${p} to be rejected`);
}

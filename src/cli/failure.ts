import { ActionableError, AppError } from '../errors.js';

/** A command used wrongly: the CLI prints the message and its usage, and exits 2. */
export class UsageError extends Error {}

/**
 * The line a failure the user can act on is reported as (a bad setting, a database that does not
 * exist, a data folder in use, a model that does not answer); undefined for an unexpected failure,
 * whose stack is worth showing.
 */
export function knownFailure(error: unknown): string | undefined {
  if (error instanceof ActionableError || error instanceof AppError) {
    return error.message.replace(/\s+/g, ' ').trim();
  }
  return undefined;
}

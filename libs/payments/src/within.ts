/**
 * `work`, or a rejection with `late()`'s error once `ms` passed without its answer: for a store or
 * a queue whose call has no timeout of its own. The timer ends with the race; none outlives it.
 * @internal
 */
export function within<T>(work: T | PromiseLike<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  return Promise.race([work, timedOut]).finally(() => clearTimeout(timer));
}

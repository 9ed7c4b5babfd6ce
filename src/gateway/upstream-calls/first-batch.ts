// A stream's first batch, awaited inside the attempt: until it arrives nothing has reached the
// client, so an upstream that ends its stream at once is a malformed answer (retried, then the
// next route), not an empty 200.
import { UpstreamNetworkError } from "../../providers/provider-errors.js";

export async function firstBatch<T>(iterator: AsyncIterator<T[]>, provider: string): Promise<T[]> {
  const first = await iterator.next();
  if (first.done) throw new UpstreamNetworkError(provider, "invalid_response", "the stream ended before any event");
  return first.value;
}

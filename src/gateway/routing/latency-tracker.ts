// Recent latency per upstream (exponentially weighted), for plans with low-latency routing.
export class LatencyTracker {
  private readonly averages = new Map<string, number>();

  record(provider: string, model: string, milliseconds: number): void {
    const key = `${provider}\u0000${model}`;
    const previous = this.averages.get(key);
    this.averages.set(key, previous === undefined ? milliseconds : previous * 0.8 + milliseconds * 0.2);
  }

  /** Unknown upstreams estimate 0 so they get tried and measured. */
  estimate(provider: string, model: string): number {
    return this.averages.get(`${provider}\u0000${model}`) ?? 0;
  }
}

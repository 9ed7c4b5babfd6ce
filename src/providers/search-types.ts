// The web search capability, vendor-neutral: a query in, ranked results out. Normalising the
// published date, trying the next provider when one fails, billing and the response envelope are
// the gateway's (gateway/search).

export interface SearchRequest {
  /** The vendor's model or mode from the catalog entry (`web`, `basic`, `advanced` ...). */
  model: string;
  query: string;
  /** 1 to 20; a vendor may return fewer. */
  maxResults: number;
}

export interface SearchHit {
  title: string;
  url: string;
  /** Plain text: markup the vendor adds (Brave's <strong>) removed. */
  snippet: string;
  /**
   * When the page was published, as the vendor gives it (Brave's `page_age` or `age`, Tavily's
   * RFC 1123 `published_date`, SearXNG's ISO `publishedDate`); absent when it gives none.
   */
  published?: string;
}

export interface SearchAnswer {
  results: SearchHit[];
  upstreamRequestId?: string;
}

export interface SearchCapability {
  /**
   * Throws UpstreamHttpError / UpstreamNetworkError on a vendor failure, including a 200 that is
   * no answer (SearXNG with every engine unresponsive), so the gateway can try the next provider.
   */
  search(request: SearchRequest, options: { signal: AbortSignal }): Promise<SearchAnswer>;
}

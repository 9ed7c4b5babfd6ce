// The running gateway: current config (reloaded on change), providers, metadata, usage
// ledger and the domain services. The server layer calls into this; it knows nothing of HTTP.
import type { ConfigError } from "../config/config-error.js";
import { editConfig, type RawConfig } from "../config/config-file.js";
import type { PlanLimits, StateInput } from "../config/config-schema.js";
import { watchConfig } from "../config/config-watcher.js";
import type { HomePaths } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import { UnsetEnvWarnings } from "../config/unset-env-warnings.js";
import { safeFetch } from "../net/safe-fetch.js";
import { UpstreamHttp } from "../net/upstream-http.js";
import type { Provider } from "../providers/provider.js";
import { FILE_LEASE_MS } from "../store/file-state.js";
import type { MetadataRecords } from "../store/metadata-store.js";
import { openState, type StateStores } from "../store/open-state.js";
import type { ProjectRecords } from "../store/project-records.js";
import type { Admission, RateLimitBuckets } from "../store/rate-buckets.js";
import type { RedisConfigStore } from "../store/redis-config-store.js";
import { openServerConfig } from "../store/server-config.js";
import type { VideoJobRecords } from "../store/video-jobs.js";
import { type PublicAudioCatalog, publicAudioCatalog } from "./audio/audio-catalog.js";
import { SpeechService } from "./audio/speech-service.js";
import { maxAudioUploadBytes } from "./audio/transcription-request.js";
import { TranscriptionService } from "./audio/transcription-service.js";
import { listVoices, type VoiceEntry } from "./audio/voice-catalog.js";
import { type Caller, KeyAuthenticator } from "./auth/key-authenticator.js";
import { type CallerPlan, PlanLookup } from "./auth/plan-lookup.js";
import { admitCaller, DeferredAdmission, rateTakeOf } from "./auth/rate-limiter.js";
import { BatchRunner } from "./batches/batch-runner.js";
import { BatchService } from "./batches/batch-service.js";
import { CreditLedger } from "./billing/credit-ledger.js";
import { ResponseCache } from "./cache/response-cache.js";
import { ChatService } from "./chat/chat-service.js";
import { EmbeddingsService } from "./embeddings/embeddings-service.js";
import type { PublicImageCatalog } from "./images/image-catalog.js";
import { ImageDrawingService } from "./images/image-drawing-service.js";
import { ImageLibrary } from "./images/image-library.js";
import { type ImageStyles, imageStyles, offeredImageCatalog } from "./images/image-models.js";
import { ImageTransformService } from "./images/image-transform-service.js";
import type { UrlFetcher } from "./media/picture-input.js";
import { MessagesService } from "./messages/messages-service.js";
import { createProviders } from "./provider-set.js";
import { NativeResponses } from "./responses/native-responses.js";
import { ResponsesService } from "./responses/responses-service.js";
import { WebSearches } from "./responses/web-searches.js";
import { CircuitBreakers } from "./routing/circuit-breaker.js";
import { LatencyTracker } from "./routing/latency-tracker.js";
import { SearchService } from "./search/search-service.js";
import type { ServiceContext } from "./service-context.js";
import { OpenAIFiles } from "./storage/openai-files.js";
import { StorageService } from "./storage/storage-service.js";
import type { CallObserver } from "./upstream-calls/call-observer.js";
import { ChatMetering } from "./upstream-calls/chat-metering.js";
import { type PublicVideoModel, publicVideoCatalog } from "./video/video-models.js";
import { VideoPoller } from "./video/video-poller.js";
import { VideoService } from "./video/video-service.js";
import { DescribeService } from "./vision/describe-service.js";
import { OcrService } from "./vision/ocr-service.js";

export interface GatewayLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface GatewayOptions {
  /**
   * How user-supplied URLs (pictures to edit, describe ...) are fetched. Always the SSRF-safe
   * fetcher; tests pass one that maps a public test host to a local server. Not configurable
   * from the config file on purpose.
   */
  fetchUrl?: UrlFetcher;
  /** The circuit breakers' monotonic clock in milliseconds (tests move time by hand). */
  clock?: () => number;
  /** Told of each request's upstream attempts and usage rows (the server's access log). */
  observer?: CallObserver;
  /** Wall-clock milliseconds for link lifetimes and expiries (tests move time by hand). */
  now?: () => number;
  /** Test seam: where the shared state lives, instead of the config's `state` section. */
  state?: StateInput;
}

/** How often stored responses past their retention are removed (and once at start). */
const RESPONSE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export class Gateway {
  readonly chat: ChatService;
  readonly messages: MessagesService;
  /** The Responses API, converted onto chat. */
  readonly responses: ResponsesService;
  /** Embedding vectors, routed and metered like chat. */
  readonly embeddings: EmbeddingsService;
  /** Answers kept for identical requests, when a key or a request asks (cache/response-cache.ts). */
  readonly cache: ResponseCache;
  readonly images: ImageDrawingService;
  /** Upscaling and background removal. */
  readonly imageTransforms: ImageTransformService;
  readonly imageLibrary: ImageLibrary;
  readonly ledger: CreditLedger;
  readonly projects: ProjectRecords;
  /** Picture reading: description through the chat router, OCR on the local engine. */
  readonly describer: DescribeService;
  readonly ocr: OcrService;
  /** Speech to text and text to speech. */
  readonly transcription: TranscriptionService;
  readonly speech: SpeechService;
  /** Video jobs, and the schedule that moves them on. */
  readonly video: VideoService;
  readonly videoPoller: VideoPoller;
  /** OpenAI's Files API over the agent's storage (batches read their input and write their output through it). */
  readonly files: OpenAIFiles;
  /** The Batch API, and what runs the batches' lines. */
  readonly batches: BatchService;
  readonly batchRunner: BatchRunner;
  /** Web search across the configured search providers, in order. */
  readonly search: SearchService;
  /** Which plan a caller, or an agent, is on now. */
  readonly plans: PlanLookup;
  /** The video jobs' records (the metrics count them by state). */
  readonly videoJobs: VideoJobRecords;
  private currentConfig: Config;
  private currentProviders: Map<string, Provider>;
  /** The SSRF-safe fetcher for user-supplied URLs. */
  readonly fetchUrl: UrlFetcher;
  private readonly rateLimiter: RateLimitBuckets;
  private readonly latency = new LatencyTracker();
  /** One circuit per provider name; they outlive config reloads. */
  readonly breakers: CircuitBreakers;
  private configWatcher: { close(): void } | null = null;
  /** With the state on Redis, the config every instance shares (store/redis-config-store.ts); the home's file otherwise. */
  private sharedConfig: RedisConfigStore | undefined;
  private responsePruning: NodeJS.Timeout | undefined;
  /** `${NAME}` variables the environment lacks: logged once each, at load or the reload that adds them. */
  private readonly envWarnings: UnsetEnvWarnings;
  /** Runs a task at the end of this turn of the event loop, after the turn's usage rows are written. */
  readonly afterTurnWrites: (task: () => void) => void;
  /** Agents and keys. */
  readonly store: MetadataRecords;

  private constructor(
    readonly paths: HomePaths,
    config: Config,
    /** Every kind of state the server keeps: this home's, or Redis shared by several instances (store/open-state.ts). */
    readonly state: StateStores,
    readonly authenticator: KeyAuthenticator,
    readonly storage: StorageService,
    private readonly http: UpstreamHttp,
    private readonly logger: GatewayLogger,
    options: GatewayOptions,
  ) {
    this.fetchUrl = options.fetchUrl ?? ((url, fetchOptions) => safeFetch(url, fetchOptions));
    this.currentConfig = config;
    this.envWarnings = new UnsetEnvWarnings((message) => logger.warn(message));
    this.envWarnings.report(config);
    this.currentProviders = createProviders(config, http, (message) => logger.warn(message), this.fetchUrl);
    this.store = state.metadata;
    const { usageLog } = state;
    // A stream's last frames leave with the turn's usage rows when they are this process's log; Redis answers on its own time.
    this.afterTurnWrites = usageLog ? (task) => usageLog.afterTurnWrites(task) : (task) => void setImmediate(task);
    this.rateLimiter = state.rates;
    this.projects = state.projects;
    this.videoJobs = state.videoJobs;
    this.ledger = new CreditLedger(
      state.credits,
      undefined,
      (row) => options.observer?.billed(row),
      (message) => logger.warn(message),
    );
    this.breakers = new CircuitBreakers((provider, state, detail) => {
      const line = `circuit ${state} for provider ${provider}: ${detail}`;
      if (state === "closed") logger.info(line);
      else logger.warn(line);
    }, options.clock);
    const plans = new PlanLookup(
      () => this.currentConfig,
      () => state.metadata.data.agents,
    );
    this.plans = plans;
    this.imageLibrary = new ImageLibrary(storage, this.projects);
    const shared: ServiceContext = {
      config: () => this.currentConfig,
      providers: () => this.currentProviders,
      ledger: this.ledger,
      plans,
      storage,
      library: this.imageLibrary,
      fetchUrl: this.fetchUrl,
      breakers: this.breakers,
      latency: this.latency,
      now: options.now ?? Date.now,
      warn: (message) => logger.warn(message),
      observer: options.observer,
    };
    this.cache = new ResponseCache(state.responseCache, shared);
    const metering = new ChatMetering(shared, (keyPrefix, tokens) => this.rateLimiter.spendTokens(keyPrefix, tokens));
    this.chat = new ChatService(metering);
    this.messages = new MessagesService(metering, shared);
    this.embeddings = new EmbeddingsService(metering);
    this.describer = new DescribeService(shared, this.chat);
    this.ocr = new OcrService(shared);
    this.images = new ImageDrawingService(shared, this.chat);
    this.imageTransforms = new ImageTransformService(shared);
    this.transcription = new TranscriptionService(shared);
    this.speech = new SpeechService(shared);
    this.search = new SearchService(shared);
    this.responses = new ResponsesService(
      this.chat,
      new WebSearches(this.search),
      state.responses,
      (message) => logger.warn(message),
      new NativeResponses(metering, this.chat, shared),
    );
    this.video = new VideoService(shared, this.videoJobs);
    this.videoPoller = new VideoPoller(shared, this.videoJobs, this.video);
    this.files = new OpenAIFiles(storage);
    this.batches = new BatchService(shared, state.batches, this);
    this.batchRunner = new BatchRunner({
      shared,
      batches: state.batches,
      service: this.batches,
      cache: this.cache,
      files: this.files,
      callerOf: (keyId) => this.authenticator.callerOfKey(keyId),
      planOf: (caller) => this.planOf(caller),
      takeRateLimit: (caller, plan) => this.takeRateLimit(caller, plan.limits),
    });
  }

  /** Open a home. Throws ConfigError or StoreError rather than start on bad or missing data. */
  static async open(paths: HomePaths, logger: GatewayLogger, options: GatewayOptions = {}): Promise<Gateway> {
    const { config, state: stateSettings, shared } = await openServerConfig(paths.config, options.state, logger);
    const state = await openState(stateSettings, paths, logger).catch(async (error: unknown) => {
      await shared?.close();
      throw error;
    });
    // Storage follows config reloads (size limit, link lifetime, secret); its blob driver is fixed at start.
    let gateway: Gateway | undefined;
    const storage = await StorageService.open({
      dataDir: paths.dataDir,
      blobsDir: paths.blobsDir,
      files: state.files,
      settings: () => (gateway?.config ?? config).storage,
      logger,
      now: options.now,
      // Past any upload (each lasts at most the body timeout) and its leases.
      abandonedUploadMs: Math.max(FILE_LEASE_MS, 2 * config.server.bodyTimeoutMs),
    });
    gateway = new Gateway(paths, config, state, new KeyAuthenticator(state.metadata, options.now), storage, new UpstreamHttp(), logger, options);
    gateway.sharedConfig = shared;
    await gateway.video.restoreHolds();
    return gateway;
  }

  get config(): Config {
    return this.currentConfig;
  }

  /** Stored responses past `responses.retentionDays` removed; a failure is logged and tried again next time. */
  private pruneResponses(): void {
    this.responses.prune(this.currentConfig.responses.retentionDays).catch((error: Error) => this.logger.warn(`stored responses not pruned: ${error.message}`));
  }

  /** Follow config and metadata changes made by `gw` commands while the server runs. */
  watch(): void {
    this.store.watch();
    this.videoPoller.start();
    this.batchRunner.start();
    this.pruneResponses();
    this.responsePruning = setInterval(() => this.pruneResponses(), RESPONSE_PRUNE_INTERVAL_MS).unref();
    const events = {
      onReload: (config: Config) => this.applyConfig(config),
      onError: (error: ConfigError) => this.logger.warn(`config change refused, previous config stays in force: ${error.message}`),
    };
    // On Redis the config is the one every instance shares, followed from there instead of this home's file.
    this.configWatcher = this.sharedConfig ? this.sharedConfig.watch(events) : watchConfig(this.paths.config, events);
  }

  /**
   * Change the config this gateway runs (the admin API): the home's file under its lock, or on
   * Redis the document every instance shares; validated as a whole (an invalid result throws
   * ConfigError naming the field, and nothing is written). The new config is in force here before
   * this returns, without waiting for the file watcher or the change notice.
   */
  async editConfig<T>(edit: (raw: RawConfig) => T): Promise<{ result: T; config: Config }> {
    const outcome = this.sharedConfig ? await this.sharedConfig.edit(edit) : await editConfig(this.paths.config, edit);
    this.applyConfig(outcome.config);
    return outcome;
  }

  applyConfig(config: Config): void {
    this.currentConfig = config;
    this.envWarnings.report(config);
    this.currentProviders = createProviders(config, this.http, (message) => this.logger.warn(message), this.fetchUrl);
    this.logger.info("config reloaded");
  }

  /** GET /v1/public/image-models: the allowlisted models whose provider is configured. */
  imageCatalog(): PublicImageCatalog {
    return offeredImageCatalog({ config: this.currentConfig, providers: this.currentProviders });
  }

  /** GET /v1/image/styles. */
  imageStyles(): ImageStyles {
    return imageStyles({ config: this.currentConfig, providers: this.currentProviders });
  }

  /** GET /v1/public/audio-models. */
  audioCatalog(): Promise<PublicAudioCatalog> {
    return publicAudioCatalog({ config: this.currentConfig, providers: this.currentProviders }, this.maxAudioUploadBytes());
  }

  /** GET /v1/audio/voices. */
  audioVoices(options: { model?: string; signal: AbortSignal }): Promise<VoiceEntry[]> {
    return listVoices({ config: this.currentConfig, providers: this.currentProviders }, { ...options, warn: (message) => this.logger.warn(message) });
  }

  /** GET /v1/public/video-models. */
  videoCatalog(): { models: PublicVideoModel[] } {
    return publicVideoCatalog({ config: this.currentConfig, providers: this.currentProviders });
  }

  /** The largest audio upload: a multipart file as large as a stored file (storage.maxFileBytes). */
  maxAudioUploadBytes(): number {
    return maxAudioUploadBytes(this.currentConfig);
  }

  planOf(caller: Caller): CallerPlan {
    return this.plans.of(caller);
  }

  /** Count one request against the caller's key (auth/rate-limiter.ts): 429 with Retry-After when over. */
  takeRateLimit(caller: Caller, plan: PlanLimits): Promise<Admission> {
    return admitCaller(this.rateLimiter, caller, plan);
  }

  /** The same count, left for the call's credit hold to make in the same step (auth/rate-limiter.ts). */
  deferRateLimit(caller: Caller, plan: PlanLimits, report: (admission: Admission) => void): DeferredAdmission {
    return new DeferredAdmission(rateTakeOf(caller, plan), this.rateLimiter, report);
  }

  async close(): Promise<void> {
    clearInterval(this.responsePruning);
    await Promise.all([this.videoPoller.stop(), this.batchRunner.stop()]);
    this.configWatcher?.close();
    await this.sharedConfig?.close();
    await this.state.close();
    await this.storage.close();
    await this.http.close();
  }
}

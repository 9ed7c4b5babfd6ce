// POST /anthropic/v1/messages/count_tokens: how many input tokens a prompt is, routed like a
// message (key patterns, plan gates, candidates in order with retries and breakers) but neither
// reserved nor billed (docs/decisions.md §20). A provider that counts natively (Anthropic) is
// asked; any other candidate answers gw's own estimate, the one billed when an upstream reports
// no usage, in Anthropic's shape `{input_tokens}`.

import { upstreamSettingsFor } from "../../config/config-schema.js";
import type { JsonObject } from "../../providers/chat-types.js";
import type { Provider } from "../../providers/provider.js";
import { assertKeyAllowsModel } from "../auth/key-limits.js";
import { imageRuleOf } from "../billing/chat-reservation.js";
import { inputTokenEstimate, measureMessagesPrompt } from "../billing/prompt-measure.js";
import { withoutGatewayControlFields } from "../chat/gateway-control-fields.js";
import { resolveRoutes } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import type { ChatCallContext } from "../upstream-calls/chat-metering.js";
import { attemptInOrder, attemptReports } from "../upstream-calls/upstream-attempts.js";
import type { CountTokensRequest } from "./messages-types.js";
import { forNativeUpstream } from "./system-messages.js";

export interface TokenCount {
  body: JsonObject;
  upstreamRequestId?: string;
}

const countsTokens = (provider: Provider) => provider.messages !== undefined || provider.chat !== undefined;

export class CountTokensService {
  constructor(private readonly shared: ServiceContext) {}

  async count(request: CountTokensRequest, context: ChatCallContext, headers: Record<string, string>): Promise<TokenCount> {
    const config = this.shared.config();
    assertKeyAllowsModel(context.caller.key, request.model);
    const candidates = resolveRoutes(config, request.model, { planName: context.caller.agent.plan, plan: context.plan, latency: this.shared.latency });
    const { result } = await attemptInOrder(
      {
        candidates,
        providers: this.shared.providers(),
        settings: (name) => upstreamSettingsFor(config, name),
        signal: context.signal,
        supports: countsTokens,
        breakers: this.shared.breakers,
        ...attemptReports(this.shared, context.requestId),
      },
      async ({ candidate, provider, firstByteTimeoutMs, deadline }): Promise<TokenCount> => {
        const native = provider.messages;
        if (native?.countTokens) {
          const upstream = forNativeUpstream({ ...withoutGatewayControlFields(request), model: candidate.upstreamModel }, headers);
          return native.countTokens(upstream, { signal: context.signal, headers, firstByteTimeoutMs, deadline });
        }
        const rule = imageRuleOf(config.providers[candidate.provider]?.type);
        return { body: { input_tokens: inputTokenEstimate(measureMessagesPrompt(request), rule, candidate.upstreamModel) } };
      },
    );
    return result;
  }
}

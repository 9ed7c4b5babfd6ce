// What the CLI says when a request never got an answer. A TLS certificate the client does not
// trust is not a server that is down: it says so, and how to trust `gw serve --https`'s own
// self-signed certificate (NODE_EXTRA_CA_CERTS; docs/decisions.md §13).
import { networkReason } from "./gw-api-error.js";

/** OpenSSL's verification codes and Node's host-name mismatch, as fetch and undici report them. */
const UNTRUSTED_CERTIFICATE =
  /^(?:DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * `certificateFile`: the self-signed certificate this machine's gw home keeps (tls/cert.pem), when
 * there is one, to name it; otherwise the hint says where the server keeps its own.
 */
export function unreachableGatewayMessage(origin: string, error: unknown, certificateFile?: string): string {
  const reason = networkReason(error);
  if (UNTRUSTED_CERTIFICATE.test(reason)) {
    const trust = certificateFile
      ? `set NODE_EXTRA_CA_CERTS=${certificateFile} (this home's certificate)`
      : "set NODE_EXTRA_CA_CERTS to the tls/cert.pem in the server's gw home (`gw doctor` there shows its path)";
    return `the gateway at ${origin} presented a TLS certificate this client does not accept (${reason}); to trust the self-signed certificate of \`gw serve --https\`, ${trust}`;
  }
  return `cannot reach the gateway at ${origin} (${reason}); is \`gw serve\` running?`;
}

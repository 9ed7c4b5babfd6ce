// IP addresses and CIDR ranges in the config (admin.allowFrom), read with ipaddr.js.
import ipaddr from "ipaddr.js";

/** "10.0.0.0/8", "fd00::/8" or a single address. */
export function isAddressOrRange(text: string): boolean {
  return ipaddr.isValid(text) || isRange(text);
}

function isRange(text: string): boolean {
  try {
    ipaddr.parseCIDR(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether an address (as a socket reports it, IPv4-mapped IPv6 included) lies in one of the ranges. */
export function addressInRanges(address: string | undefined, ranges: readonly string[]): boolean {
  if (!address || !ipaddr.isValid(address) || ranges.length === 0) return false;
  const parsed = ipaddr.process(address);
  return ranges.some((range) => {
    const [network, bits] = isRange(range) ? ipaddr.parseCIDR(range) : [ipaddr.process(range), undefined];
    if (network.kind() !== parsed.kind()) return false;
    if (bits === undefined) return network.toString() === parsed.toString();
    return parsed.match([network, bits] as [typeof parsed, number]);
  });
}

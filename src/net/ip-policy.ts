// Which addresses a user-supplied URL may reach: public unicast only. Everything else (loopback,
// private, link-local, carrier-grade NAT, unique-local, multicast, broadcast, unspecified,
// reserved, documentation, benchmarking, cloud metadata) is refused. IPv6 forms that embed an
// IPv4 address (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4) are judged by the IPv4
// address they carry, because that is where the packets end up.
import ipaddr from "ipaddr.js";

export type AddressClass = "loopback" | "private" | "link_local" | "shared" | "metadata" | "multicast" | "unspecified" | "reserved" | "invalid";

export type AddressVerdict = { allowed: true } | { allowed: false; addressClass: AddressClass };

/** Words for a refusal message: "the URL resolves to <words>". Never the address itself. */
export const ADDRESS_CLASS_WORDS: Record<AddressClass, string> = {
  loopback: "a loopback address",
  private: "a private address",
  link_local: "a link-local address",
  shared: "a shared (carrier-grade NAT) address",
  metadata: "a cloud metadata address",
  multicast: "a multicast or broadcast address",
  unspecified: "an unspecified address",
  reserved: "a reserved or non-public address",
  invalid: "an address that cannot be checked",
};

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

// Instance-metadata and platform endpoints. Most sit in ranges refused anyway; they are listed so
// the refusal names them, and 168.63.129.16 (Azure WireServer) is public space and needs the entry.
const METADATA_CIDRS: Cidr[] = [
  "169.254.169.254/32", // AWS, GCP, Azure, OpenStack, DigitalOcean ...
  "169.254.170.2/32", // AWS ECS task metadata
  "169.254.169.253/32", // AWS VPC DNS
  "100.100.100.200/32", // Alibaba Cloud
  "168.63.129.16/32", // Azure WireServer
  "192.0.0.192/32", // Oracle Cloud
  "fd00:ec2::254/128", // AWS IMDS over IPv6
  "fd00:ec2::23/128", // AWS VPC DNS over IPv6
].map((cidr) => ipaddr.parseCIDR(cidr));

// Ranges ipaddr.js labels "unicast" that are still not the public internet.
const EXTRA_NON_PUBLIC_IPV4: Cidr[] = [
  "192.0.0.0/24", // IETF protocol assignments
  "198.18.0.0/15", // benchmarking
  "240.0.0.0/4", // future use, includes 255.255.255.255
].map((cidr) => ipaddr.parseCIDR(cidr));

const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

const IPV4_RANGE_CLASS: Record<string, AddressClass> = {
  unicast: "reserved", // only reached for EXTRA_NON_PUBLIC_IPV4
  unspecified: "unspecified",
  broadcast: "multicast",
  multicast: "multicast",
  linkLocal: "link_local",
  loopback: "loopback",
  carrierGradeNat: "shared",
  private: "private",
};

const IPV6_RANGE_CLASS: Record<string, AddressClass> = {
  unspecified: "unspecified",
  linkLocal: "link_local",
  deprecatedSiteLocal: "link_local",
  multicast: "multicast",
  loopback: "loopback",
  uniqueLocal: "private",
};

/** Judge one address given as text (dotted quad, or IPv6 with or without brackets and zone id). */
export function checkAddress(text: string): AddressVerdict {
  const parsed = parseAddress(text);
  if (!parsed) return refuse("invalid");
  return parsed.kind() === "ipv4" ? checkIPv4(parsed as ipaddr.IPv4) : checkIPv6(parsed as ipaddr.IPv6);
}

/**
 * Parse an address literal. Accepts the legacy IPv4 notations ipaddr.js knows (decimal, octal,
 * hex, short forms) as well, so a caller that did not go through the URL parser is still safe.
 */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let candidate = text.trim();
  if (candidate.startsWith("[") && candidate.endsWith("]")) candidate = candidate.slice(1, -1);
  // A zone id names an interface, which only matters for link-local targets; judge the address.
  const zone = candidate.indexOf("%");
  if (zone !== -1 && candidate.includes(":")) candidate = candidate.slice(0, zone);
  try {
    if (ipaddr.IPv6.isValid(candidate)) return ipaddr.IPv6.parse(candidate);
    if (ipaddr.IPv4.isValid(candidate)) return ipaddr.IPv4.parse(candidate);
  } catch {
    return null;
  }
  return null;
}

function checkIPv4(address: ipaddr.IPv4): AddressVerdict {
  if (inAny(address, METADATA_CIDRS)) return refuse("metadata");
  const range = address.range();
  if (range !== "unicast") return refuse(IPV4_RANGE_CLASS[range] ?? "reserved");
  if (inAny(address, EXTRA_NON_PUBLIC_IPV4)) return refuse("reserved");
  return { allowed: true };
}

function checkIPv6(address: ipaddr.IPv6): AddressVerdict {
  if (inAny(address, METADATA_CIDRS)) return refuse("metadata");
  const embedded = embeddedIPv4(address);
  if (embedded) {
    const verdict = checkIPv4(embedded.address);
    if (!verdict.allowed || !embedded.routable) return verdict.allowed ? refuse("reserved") : verdict;
    return verdict;
  }
  const range = address.range();
  const named = IPV6_RANGE_CLASS[range];
  if (named) return refuse(named);
  if (range !== "unicast" || !address.match(IPV6_GLOBAL_UNICAST)) return refuse("reserved");
  return { allowed: true };
}

/**
 * The IPv4 address an IPv6 address carries, if it is one of the embedding forms. `routable` says
 * whether the form itself may be used when the embedded address is public: IPv4-mapped, SIIT and
 * the well-known NAT64 prefix reach that IPv4 host; IPv4-compatible is deprecated and the
 * local-use NAT64 prefix is a private translator, so those are refused whatever they embed.
 */
function embeddedIPv4(address: ipaddr.IPv6): { address: ipaddr.IPv4; routable: boolean } | null {
  const parts = address.parts;
  const low = (): ipaddr.IPv4 => new ipaddr.IPv4([(parts[6]! >> 8) & 0xff, parts[6]! & 0xff, (parts[7]! >> 8) & 0xff, parts[7]! & 0xff]);
  const range = address.range();
  if (range === "ipv4Mapped" || range === "rfc6145") return { address: low(), routable: true };
  if (range === "rfc6052") {
    const wellKnown = parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((part) => part === 0);
    return { address: low(), routable: wellKnown };
  }
  if (range === "6to4") {
    const v4 = new ipaddr.IPv4([(parts[1]! >> 8) & 0xff, parts[1]! & 0xff, (parts[2]! >> 8) & 0xff, parts[2]! & 0xff]);
    return { address: v4, routable: true };
  }
  // IPv4-compatible ::a.b.c.d (but not :: or ::1, which range() names on their own).
  if (parts.slice(0, 6).every((part) => part === 0) && range !== "unspecified" && range !== "loopback") {
    return { address: low(), routable: false };
  }
  return null;
}

function inAny(address: ipaddr.IPv4 | ipaddr.IPv6, cidrs: Cidr[]): boolean {
  return cidrs.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

function refuse(addressClass: AddressClass): AddressVerdict {
  return { allowed: false, addressClass };
}

import ipaddr from 'ipaddr.js';

/** What an address may be for a function's connection. */
export interface AddressPolicy {
  /** Every address is allowed (`--allow-private-egress`). */
  allowPrivate: boolean;
  /** The server's own ports: loopback and local connections to them are the service itself. */
  selfPorts: number[];
  /** Whether an address is one of this machine's interfaces. */
  isLocalInterface(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
}

/**
 * Whether a function may connect to `address` (an IP address, after DNS resolution) on `port`:
 * public unicast addresses only, and the service itself on its own port. An IPv6 address that
 * carries an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, 6to4, NAT64, Teredo) is
 * judged by the IPv4 address it carries, all of them for Teredo: `[::127.0.0.1]` is written
 * `[::7f00:1]` by the URL parser, which ipaddr.js classed as public unicast. The local-use NAT64
 * prefix (64:ff9b:1::/48) is refused whatever it carries: it is not routed on the internet.
 */
export function isAllowedAddress(address: string, port: number, policy: AddressPolicy): boolean {
  if (policy.allowPrivate) return true;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.match(LOCAL_NAT64)) return false;
    const carried = embeddedIPv4(v6);
    // Through a translation there is no "service itself": only public addresses.
    if (carried.length > 0) return carried.every((v4) => v4.range() === 'unicast');
  }
  const range = parsed.range();
  if (range === 'unicast') return true;
  return policy.selfPorts.includes(port) && (range === 'loopback' || range === 'unspecified' || policy.isLocalInterface(parsed));
}

const LOCAL_NAT64 = ipaddr.parseCIDR('64:ff9b:1::/48') as [ipaddr.IPv6, number];

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d, but not :: and ::1), IPv4-translated (::ffff:0:a.b.c.d), 6to4 (2002:AABB:CCDD::/48),
 * NAT64 (64:ff9b::a.b.c.d) and Teredo (2001:0::/32: its server, and its client with the bits
 * flipped). None for any other address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return [v4(p[6]!, p[7]!)];
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return [v4(p[6]!, p[7]!)];
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2]!, p[3]!), v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  return [];
}

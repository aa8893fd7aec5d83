// Image bytes from a URL, safely: `data:` URLs decoded in place; `http(s):` URLs only when
// remote fetching is enabled, only from allowed domains, never from loopback, private,
// link-local (cloud metadata), multicast or reserved addresses unless exempted — checked
// on the addresses DNS returns, at connect time (the connection uses the address that was
// checked) and again on every redirect — with a byte limit, an overall time limit and a
// redirect limit. What the bytes are is decided later by sniffing them (native decode),
// never by a media type. Every refusal is a MediaFetchError: the client's fault (a 400).

import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface MediaFetchPolicy {
  /** Remote (http/https) URLs at all; `data:` URLs are always accepted. */
  remote: boolean;
  /** Host names fetched from: each matches itself and its subdomains. Empty: any host. */
  allowedDomains: string[];
  /** Addresses exempt from the non-public refusal: IPs or CIDRs (`10.1.0.0/16`). */
  allowedAddresses: string[];
  /** Bytes per image, encoded. */
  maxBytes: number;
  /** Whole fetch, redirects included. */
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_MEDIA_FETCH: MediaFetchPolicy = {
  remote: false,
  allowedDomains: [],
  allowedAddresses: [],
  maxBytes: 20 << 20,
  timeoutMs: 10_000,
  maxRedirects: 3,
};

/** A refused or failed image source; the message says why and is safe to show the client. */
export class MediaFetchError extends Error {
  override readonly name = 'MediaFetchError';
}

/** Addresses a client must not make the server reach. */
const NOT_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32]] as const) NOT_PUBLIC.addSubnet(net, bits, 'ipv6');

function exemptions(list: string[]): BlockList {
  const b = new BlockList();
  for (const a of list) {
    const [addr, bits] = a.split('/');
    const family = isIP(addr ?? '') === 6 ? 'ipv6' : 'ipv4';
    if (isIP(addr ?? '') === 0) throw new Error(`not an address or CIDR: ${a}`);
    if (bits === undefined) b.addAddress(addr!, family);
    else b.addSubnet(addr!, Number(bits), family);
  }
  return b;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, or `::ffff:a00:1`
 *  as URL parsing writes it), else the address. */
function unmapped(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return address;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function isPublic(address: string, exempt: BlockList): boolean {
  const a = unmapped(address);
  const family = isIP(a) === 6 ? 'ipv6' : 'ipv4';
  return exempt.check(a, family) || !NOT_PUBLIC.check(a, family);
}

function domainAllowed(host: string, allowed: string[]): boolean {
  if (allowed.length === 0) return true;
  const h = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((d) => {
    const dd = d.toLowerCase().replace(/\.$/, '');
    return h === dd || h.endsWith(`.${dd}`);
  });
}

/** `data:[type][;base64],payload` → bytes (base64 only: images are binary). */
export function decodeDataUrl(url: string, maxBytes: number): Buffer {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0) throw new MediaFetchError('malformed data: URL');
  if (!/;base64$/i.test(url.slice(5, comma))) throw new MediaFetchError('a data: URL image must be base64 (";base64,")');
  const n = url.length - comma - 1;
  if (Math.floor((n * 3) / 4) > maxBytes + 3) throw new MediaFetchError(`image is over the ${maxBytes}-byte limit`);
  // Node's decoder skips what is not base64 (or base64url) instead of failing: a payload with
  // any such byte, or padding anywhere but the end, decodes to fewer bytes than its length
  // implies. (A pattern test first cost as much as the decode itself: ~1 ms per MB.)
  const pad = url.endsWith('==') ? 2 : url.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(url.slice(comma + 1), 'base64');
  if (n % 4 === 1 || bytes.length !== Math.floor(((n - pad) * 3) / 4)) throw new MediaFetchError('data: URL payload is not valid base64');
  if (bytes.length > maxBytes) throw new MediaFetchError(`image is over the ${maxBytes}-byte limit`);
  return bytes;
}

/** A DNS lookup that fails unless every address the name resolves to is public (or exempt). */
function vettedLookup(exempt: BlockList): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family as number | undefined }, (err, addresses) => {
      if (err) return callback(new MediaFetchError(`cannot resolve ${hostname}`), '', 0);
      const bad = addresses.find((a) => !isPublic(a.address, exempt));
      if (bad) return callback(new MediaFetchError(`${hostname} resolves to ${bad.address}, which is not a public address`), '', 0);
      const first = addresses[0]!;
      if (options.all) (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

interface Hop {
  status: number;
  location?: string;
  body?: Buffer;
}

function getOnce(url: URL, policy: MediaFetchPolicy, exempt: BlockList, signal: AbortSignal): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.get(url, { lookup: vettedLookup(exempt), signal, headers: { accept: 'image/*' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        return resolve({ status, location: res.headers.location });
      }
      if (status < 200 || status >= 300) {
        res.resume();
        return reject(new MediaFetchError(`fetching the image failed: HTTP ${status}`));
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > policy.maxBytes) {
        res.destroy();
        return reject(new MediaFetchError(`image is over the ${policy.maxBytes}-byte limit`));
      }
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > policy.maxBytes) {
          res.destroy();
          reject(new MediaFetchError(`image is over the ${policy.maxBytes}-byte limit`));
        } else parts.push(c);
      });
      res.on('end', () => resolve({ status, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The bytes of an image URL under `policy`. */
export async function fetchMedia(url: string, policy: MediaFetchPolicy, signal?: AbortSignal): Promise<Buffer> {
  if (url.startsWith('data:')) return decodeDataUrl(url, policy.maxBytes);
  if (!policy.remote) throw new MediaFetchError('remote image URLs are not enabled on this server (use a data: URL)');
  const exempt = exemptions(policy.allowedAddresses);
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const all = signal ? AbortSignal.any([deadline, signal]) : deadline;
  let current = url;
  for (let hop = 0; hop <= policy.maxRedirects; hop++) {
    let u: URL;
    try {
      u = new URL(current);
    } catch {
      throw new MediaFetchError('malformed image URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new MediaFetchError(`image URL scheme ${u.protocol} is not supported`);
    if (u.username || u.password) throw new MediaFetchError('image URLs with credentials are not accepted');
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!domainAllowed(host, policy.allowedDomains)) throw new MediaFetchError(`${host} is not an allowed media domain`);
    // An address literal is connected to without a lookup: check it here.
    if (isIP(host) !== 0 && !isPublic(host, exempt)) throw new MediaFetchError(`${host} is not a public address`);
    let r: Hop;
    try {
      r = await getOnce(u, policy, exempt, all);
    } catch (e) {
      if (e instanceof MediaFetchError) throw e;
      if (deadline.aborted) throw new MediaFetchError(`fetching the image timed out after ${policy.timeoutMs} ms`);
      if (signal?.aborted) throw e;
      throw new MediaFetchError('fetching the image failed');
    }
    if (r.body) return r.body;
    current = new URL(r.location!, u).href;
  }
  throw new MediaFetchError(`more than ${policy.maxRedirects} redirects`);
}

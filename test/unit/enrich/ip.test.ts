import { describe, expect, it } from "vitest";
import { clientIpFromRequest, DEFAULT_TRUNCATE, truncateIp } from "../../../src/ingest/enrich/ip.js";

const BY_DEFAULT = { v4PrefixBits: 24, v6PrefixBits: 48 };
const KEEP = { v4PrefixBits: 32, v6PrefixBits: 128 };

describe("truncateIp", () => {
  it.each([
    ["203.0.113.77", "203.0.113.0"],
    ["10.1.2.3", "10.1.2.0"],
    ["2001:db8:85a3:8d3:1319:8a2e:370:7348", "2001:db8:85a3::"],
    ["2001:0DB8:85A3:0000:0000:8A2E:0370:7334", "2001:db8:85a3::"],
    ["2001:db8::1", "2001:db8::"],
    ["::1", "::"],
    ["::ffff:203.0.113.7", "203.0.113.0"],
    ["::FFFF:203.0.113.7", "203.0.113.0"],
    ["::ffff:cb00:7107", "203.0.113.0"],
    ["[2001:db8:1:2::3]", "2001:db8:1::"],
    ["fe80::1%eth0", "fe80::"],
    [" 203.0.113.77 ", "203.0.113.0"],
  ])("%s → %s at /24, /48", (ip, expected) => {
    expect(truncateIp(ip, BY_DEFAULT)).toBe(expected);
  });

  it("uses /24 and /48 by default", () => {
    expect(DEFAULT_TRUNCATE).toEqual(BY_DEFAULT);
    expect(truncateIp("203.0.113.77")).toBe("203.0.113.0");
  });

  it.each([
    ["203.0.113.77", "203.0.113.77"],
    ["2001:db8:85a3:8d3:1319:8a2e:370:7348", "2001:db8:85a3:8d3:1319:8a2e:370:7348"],
    ["2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"],
    ["2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
  ])("keeps %s at /32, /128 (canonical form %s)", (ip, expected) => {
    expect(truncateIp(ip, KEEP)).toBe(expected);
  });

  it.each([
    [16, 64, "203.0.0.0", "2001:db8:85a3:8d3::"],
    [20, 56, "203.0.112.0", "2001:db8:85a3:800::"],
    [0, 0, "0.0.0.0", "::"],
    [40, 200, "203.0.113.77", "2001:db8:85a3:8d3:1319:8a2e:370:7348"],
  ])("v4 /%i, v6 /%i", (v4, v6, expected4, expected6) => {
    const opts = { v4PrefixBits: v4, v6PrefixBits: v6 };
    expect(truncateIp("203.0.113.77", opts)).toBe(expected4);
    expect(truncateIp("2001:db8:85a3:8d3:1319:8a2e:370:7348", opts)).toBe(expected6);
  });

  it.each([
    undefined,
    "",
    "unknown",
    "1.2.3",
    "256.1.1.1",
    "203.0.113.7:80",
    "2001:db8::g",
    "::ffff:999.0.0.1",
  ])("rejects %j", (ip) => {
    expect(truncateIp(ip, BY_DEFAULT)).toBe("");
  });

  it("formats like the WHATWG URL serializer (RFC 5952) for varied addresses", () => {
    const samples = [
      "1:0:0:2:0:0:0:3",
      "0:0:1:0:0:0:0:0",
      "1:2:3:4:5:6:7:0",
      "0:1:2:3:4:5:6:7",
      "a:0:b:0:c:0:d:0",
    ];
    for (const ip of samples) {
      expect(truncateIp(ip, KEEP)).toBe(new URL(`http://[${ip}]/`).hostname.slice(1, -1));
    }
  });
});

describe("clientIpFromRequest", () => {
  it("uses the socket address without a trusted proxy, ignoring X-Forwarded-For", () => {
    expect(clientIpFromRequest("198.51.100.4", "203.0.113.9", false)).toBe("198.51.100.4");
  });

  it("strips ::ffff: from a dual-stack socket address", () => {
    expect(clientIpFromRequest("::ffff:198.51.100.4", undefined, false)).toBe("198.51.100.4");
  });

  it("takes the right-most valid X-Forwarded-For entry (added by the trusted proxy)", () => {
    // The client forged "1.2.3.4"; the proxy appended the address it saw.
    expect(clientIpFromRequest("10.0.0.2", "1.2.3.4, 203.0.113.9", true)).toBe("203.0.113.9");
    expect(clientIpFromRequest("10.0.0.2", "1.2.3.4, ::ffff:203.0.113.9, unknown", true)).toBe("203.0.113.9");
    expect(clientIpFromRequest("10.0.0.2", "1.2.3.4, 2001:db8::7 ", true)).toBe("2001:db8::7");
  });

  it("accepts entries with ports", () => {
    expect(clientIpFromRequest("10.0.0.2", "203.0.113.9:51234", true)).toBe("203.0.113.9");
    expect(clientIpFromRequest("10.0.0.2", "[2001:db8::7]:443", true)).toBe("2001:db8::7");
  });

  it("falls back to the socket when the header has no valid address", () => {
    expect(clientIpFromRequest("::ffff:10.0.0.2", "unknown, , garbage", true)).toBe("10.0.0.2");
    expect(clientIpFromRequest("10.0.0.2", undefined, true)).toBe("10.0.0.2");
    expect(clientIpFromRequest("10.0.0.2", "", true)).toBe("10.0.0.2");
  });

  it("is empty when nothing is known", () => {
    expect(clientIpFromRequest(undefined, undefined, true)).toBe("");
    expect(clientIpFromRequest("not-an-ip", undefined, false)).toBe("");
  });
});

/**
 * Campaign signals carried by a page URL: UTM fields, ad-platform click ids and ad entity ids.
 * Pure and synchronous; every field is a string, '' when absent, so rows never hold null text.
 */

export interface UtmFields {
  source: string;
  medium: string;
  campaign: string;
  term: string;
  content: string;
  id: string;
}

export interface PageSignals {
  pageUrl: string;
  pageHost: string;
  pagePath: string;
  utm: UtmFields;
  /** Lower-cased click id name → value, only for ids present in the URL. */
  clickIds: Record<string, string>;
  campaignId: string;
  adsetId: string;
  adId: string;
}

/** Click id parameters we recognise, lower-cased (`ScCid` arrives as `sccid`). */
export const CLICK_ID_PARAMS = [
  "gclid",
  "gbraid",
  "wbraid",
  "fbclid",
  "ttclid",
  "msclkid",
  "twclid",
  "li_fat_id",
  "sccid",
  "epik",
  "dclid",
] as const;

export type ClickIdName = (typeof CLICK_ID_PARAMS)[number];

// Platforms name the same id differently (Meta's `utm_id`, generic `campaign_id`, HubSpot's `hsa_*`);
// the first present name wins, in this order.
const CAMPAIGN_ID_PARAMS = ["utm_id", "campaign_id", "hsa_cam"] as const;
const ADSET_ID_PARAMS = ["adset_id", "ad_group_id", "hsa_grp"] as const;
const AD_ID_PARAMS = ["ad_id", "hsa_ad"] as const;

/** Lower-cases, drops a leading `www.` and a trailing root dot, so one site has one host value. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.endsWith(".")) h = h.slice(0, -1);
  return h.startsWith("www.") ? h.slice(4) : h;
}

function emptySignals(pageUrl: string): PageSignals {
  return {
    pageUrl,
    pageHost: "",
    pagePath: "",
    utm: { source: "", medium: "", campaign: "", term: "", content: "", id: "" },
    clickIds: {},
    campaignId: "",
    adsetId: "",
    adId: "",
  };
}

/**
 * Parses only absolute URLs with a host: `new URL` alone would accept `localhost:3000/x` as a URL
 * whose scheme is `localhost:`, which is not a page anyone visited.
 */
function parseAbsolute(raw: string): URL | null {
  if (!raw) return null;
  try {
    const url = new URL(raw);
    return url.hostname ? url : null;
  } catch {
    return null;
  }
}

/** Query parameters keyed by lower-cased name; the first non-empty value of a repeated name wins. */
function lowerParams(url: URL): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    const key = name.trim().toLowerCase();
    const v = value.trim();
    if (v && !out.has(key)) out.set(key, v);
  }
  return out;
}

function firstOf(params: Map<string, string>, names: readonly string[]): string {
  for (const name of names) {
    const v = params.get(name);
    if (v) return v;
  }
  return "";
}

export function parsePageUrl(url: string | undefined): PageSignals {
  const pageUrl = url ?? "";
  const parsed = parseAbsolute(pageUrl.trim());
  if (!parsed) return emptySignals(pageUrl);

  const params = lowerParams(parsed);
  const clickIds: Record<string, string> = {};
  for (const name of CLICK_ID_PARAMS) {
    const v = params.get(name);
    if (v) clickIds[name] = v;
  }
  return {
    pageUrl,
    pageHost: normalizeHost(parsed.hostname),
    pagePath: parsed.pathname,
    utm: {
      source: params.get("utm_source") ?? "",
      medium: params.get("utm_medium") ?? "",
      campaign: params.get("utm_campaign") ?? "",
      term: params.get("utm_term") ?? "",
      content: params.get("utm_content") ?? "",
      id: params.get("utm_id") ?? "",
    },
    clickIds,
    campaignId: firstOf(params, CAMPAIGN_ID_PARAMS),
    adsetId: firstOf(params, ADSET_ID_PARAMS),
    adId: firstOf(params, AD_ID_PARAMS),
  };
}

/**
 * Host of a referrer. Any scheme with a host counts: Android apps refer as
 * `android-app://com.google.android.gm/`, and that package name is the useful part.
 */
export function referrerHost(referrer: string | undefined): string {
  const parsed = parseAbsolute((referrer ?? "").trim());
  return parsed ? normalizeHost(parsed.hostname) : "";
}

/**
 * Meta's `fbc` cookie value for a click id: `fb.<subdomainIndex>.<creationTimeMs>.<fbclid>`.
 * Index 1 is what Meta documents for values built outside its own pixel.
 */
export function deriveFbc(fbclid: string, eventTimeMs: number): string {
  const id = fbclid.trim();
  if (!id || !Number.isFinite(eventTimeMs)) return "";
  return `fb.1.${Math.trunc(eventTimeMs)}.${id}`;
}

import { z } from "zod";
import { HOLDS_CENTS_MESSAGE, holdsCents, MONEY_LIMIT, roundMoney } from "./money.js";

/** Value shapes shared by every module that takes money, rates, days or currencies as input. */

/** The message for a missing or mistyped value: absent values keep zod's own "required" wording. */
export const required = (what: string) => (iss: { input?: unknown }) =>
  iss.input === undefined ? undefined : what;

export const amountSchema = z
  .number({ error: required("must be a number") })
  .min(0, "must be ≥ 0")
  .lt(MONEY_LIMIT, "must be below 10^14")
  .refine(holdsCents, { message: HOLDS_CENTS_MESSAGE, when: (payload) => payload.issues.length === 0 })
  .transform(roundMoney);
export const percentSchema = z
  .number({ error: required("must be a number") })
  .min(0, "must be ≥ 0")
  .max(100, "must be ≤ 100 (a percentage)")
  .transform(roundMoney);
export const daySchema = z.iso
  .date({ error: required("must be a date YYYY-MM-DD") })
  .refine((d) => d >= "1970-01-01" && d <= "2149-12-31", "must be between 1970 and 2149");
export const currencySchema = z
  .string({ error: required("must be a string") })
  .regex(/^[A-Za-z]{3}$/, "must be an ISO 4217 code")
  .transform((c) => c.toUpperCase());

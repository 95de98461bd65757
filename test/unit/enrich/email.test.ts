import { describe, expect, it } from "vitest";
import { hashEmail } from "../../../src/ingest/enrich/email.js";

const TEST_AT_EXAMPLE = "973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b";

describe("hashEmail", () => {
  it("is the hex SHA-256 of the address", () => {
    expect(hashEmail("test@example.com")).toBe(TEST_AT_EXAMPLE);
  });

  it("trims and lower-cases before hashing", () => {
    expect(hashEmail("  Test@Example.COM \n")).toBe(TEST_AT_EXAMPLE);
  });

  it.each(["", "   ", "not-an-email", "973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b"])(
    "is null without an @: %j",
    (value) => {
      expect(hashEmail(value)).toBeNull();
    },
  );

  it("hashes non-ASCII addresses as UTF-8", () => {
    expect(hashEmail("Jörg@Example.de")).toMatch(/^[0-9a-f]{64}$/);
    expect(hashEmail("Jörg@Example.de")).toBe(hashEmail("jörg@example.de"));
  });
});

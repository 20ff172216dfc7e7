import type { JsonRecord } from "./log-follower.js";

/** A string field of a parsed record ("" when absent or not a string): logs are untrusted input. */
export function stringField(record: JsonRecord | undefined, key: string): string {
  const value = record?.[key];
  return typeof value === "string" ? value : "";
}

/** An object field of a parsed record (undefined when absent or not an object). */
export function objectField(record: JsonRecord | undefined, key: string): JsonRecord | undefined {
  const value = record?.[key];
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

/** An array field of a parsed record ([] when absent or not an array). */
export function arrayField(record: JsonRecord | undefined, key: string): readonly unknown[] {
  const value = record?.[key];
  return Array.isArray(value) ? value : [];
}

/** The elements of an array that are objects. */
export function objects(values: readonly unknown[]): JsonRecord[] {
  return values.filter((v): v is JsonRecord => v !== null && typeof v === "object" && !Array.isArray(v));
}

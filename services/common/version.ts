/** The StarAgent version servers report (kept equal to package.json's by version.test.ts). */
export const STARAGENT_VERSION = "0.1.0";

/**
 * The API contract this build speaks: the proto package of `proto/staragent/v1/` (kept equal to the
 * generated code's by version.test.ts). Clients built against another major version must not assume
 * compatibility.
 */
export const CONTRACT_VERSION = "staragent.v1";

/** The StarAgent version servers report (kept in step with package.json by `make lint`). */
export const STARAGENT_VERSION = "0.1.0";

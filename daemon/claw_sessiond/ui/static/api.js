// The viewer's requests to its own server (same origin; the cookie set at start-up authenticates).

export class ApiError extends Error {}

/** GET a JSON API path; a non-2xx reply becomes an ApiError with the server's one-line message. */
export async function getJson(path) {
  let response;
  try {
    response = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch (error) {
    throw new ApiError(`the viewer's server did not answer (${error.message})`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const said = body && typeof body.error === "string" ? body.error : response.statusText;
    throw new ApiError(`${response.status}: ${said}`);
  }
  return body;
}

let about = null;

/** /api/info (workspace, backend, daemon_running, offline, version), asked once per page load. */
export function aboutServer() {
  if (about === null) {
    about = getJson("/api/info");
    about.catch(() => {
      about = null;
    });
  }
  return about;
}

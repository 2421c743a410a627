// The server's JSON API, signed in with a token kept in this tab's session storage.
const TOKEN_KEY = "loadmaster.token";

export class SignInNeeded extends Error {}

export function takeTokenFromAddress() {
  // `#token=T` on any /ui/ address signs in with T, then leaves the address bar.
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(history.state, "", location.pathname + location.search);
  }
}

export const token = () => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (value) => sessionStorage.setItem(TOKEN_KEY, value);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

function headers() {
  const value = token();
  if (!value) throw new SignInNeeded();
  return { Authorization: `Bearer ${value}` };
}

export async function getJson(path, signal) {
  const response = await fetch(path, { headers: headers(), signal });
  if (response.status === 401) {
    forgetToken();
    throw new SignInNeeded();
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      message = body.message || body.detail || message;
    } catch { /* not JSON: keep the status line */ }
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

// Server-sent events over fetch (EventSource cannot send the Authorization header):
// calls onEvent(type, data) for each event until the stream ends or `signal` aborts.
export async function stream(path, onEvent, signal) {
  const response = await fetch(path, { headers: { ...headers(), Accept: "text/event-stream" }, signal });
  if (response.status === 401) {
    forgetToken();
    throw new SignInNeeded();
  }
  if (!response.ok || !response.body) throw new Error(`${path}: ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(type, JSON.parse(data.join("\n")));
    }
  }
}

// The console's only script, served at /admin/static/console.js: auto-refresh. Every `data-refresh-s` seconds it
// fetches the same URL and replaces those children of <main> whose HTML changed, so the scroll position stays, and
// animations and open <details> of unchanged parts go on undisturbed. When the session has ended the fetch lands on
// the login page, and the browser is sent there. Without JavaScript every page still works; it just does not refresh.

export const SCRIPT = `(() => {
  const every = Number(document.body.dataset.refreshS);
  if (!every) return;
  const stamp = document.getElementById("updated");
  const tick = async () => {
    if (document.hidden) return;
    const main = document.querySelector("main");
    let res;
    try { res = await fetch(location.href, { headers: { accept: "text/html" }, cache: "no-store" }); } catch { return; }
    if (res.redirected && new URL(res.url).pathname === "/admin/login") return location.assign(location.href);
    if (!res.ok) return;
    const next = new DOMParser().parseFromString(await res.text(), "text/html").querySelector("main");
    if (!main || !next) return;
    const open = new Set([...main.querySelectorAll("details[open][id]")].map((d) => d.id));
    const now = [...next.children], was = [...main.children];
    if (now.length !== was.length) main.replaceChildren(...now);
    else now.forEach((el, i) => { if (el.outerHTML !== was[i].outerHTML && !was[i].contains(document.activeElement)) was[i].replaceWith(el); });
    for (const id of open) document.getElementById(id)?.setAttribute("open", "");
    if (stamp) stamp.textContent = new Date().toISOString().slice(11, 19);
  };
  setInterval(tick, every * 1000);
})();
`;

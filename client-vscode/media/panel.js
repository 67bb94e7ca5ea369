// The panel's only script: it forwards clicks to the extension, which holds the pack and decides
// what a click means. It reads nothing and renders nothing itself.
(function () {
  const vscode = acquireVsCodeApi();
  // The script runs after the body is parsed: the pack is on screen.
  vscode.postMessage({ type: "rendered" });
  // A new pack for an open panel: its content, already rendered by the extension, replaces the old.
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || message.type !== "show") return;
    document.title = message.title;
    document.getElementById("content").innerHTML = message.content;
    window.scrollTo(0, 0);
    vscode.postMessage({ type: "rendered" });
  });
  document.addEventListener("click", (event) => {
    const target =
      event.target instanceof Element ? event.target.closest("[data-item], [data-action]") : null;
    if (!target) return;
    event.preventDefault();
    const item = target.getAttribute("data-item");
    if (item !== null) {
      vscode.postMessage({ type: "open", item });
      return;
    }
    vscode.postMessage({ type: target.getAttribute("data-action") });
  });
})();

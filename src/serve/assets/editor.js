// litmix playground: a litmus editor with syntax highlighting.
//
// A transparent <textarea> lies over a <pre> that shows the same text
// highlighted; both scroll together. The highlighter picks its word lists
// from the test's header (PTX, X86, X86+PTX, C, OpenCL).
"use strict";

const LitmixEditor = (() => {
  const X86_OPS = new Set(["MOV", "MFENCE", "LFENCE", "SFENCE", "XCHG", "LOCK", "ADD", "SUB",
    "INC", "DEC", "CMP", "JMP", "JE", "JNE", "JZ", "JNZ", "CMPXCHG", "XADD", "AND", "OR", "XOR"]);
  const X86_REGS = /^(E?[ABCD]X|E?[SD]I|E?[SB]P|R[ABCD]X|R\d+)$/;
  const PTX_OPS = /^(ld|st|atom|red|fence|membar|bar|barrier|mov|add|sub|mul|and|or|xor|setp|bra|cvta|cp|mbarrier|not|neg|selp)(\.|$)/;
  const C_KEYWORDS = new Set(["int", "long", "unsigned", "char", "void", "if", "else", "while",
    "for", "do", "return", "atomic_int", "atomic_long", "global", "local", "volatile",
    "const", "struct", "break", "continue"]);
  const COND_KEYWORDS = new Set(["exists", "forall", "locations", "filter", "true", "false",
    "aliases", "generic", "surface", "texture", "constant"]);
  const ARCHS = new Set(["PTX", "X86", "X86+PTX", "PTX+X86", "C", "OPENCL"]);

  function escapeHtml(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function span(cls, text) {
    return `<span class="tok-${cls}">${escapeHtml(text)}</span>`;
  }

  function dialectOf(text) {
    const m = /^\s*(\S+)/.exec(text);
    return m ? m[1].toUpperCase() : "";
  }

  // Highlights litmus text; returns HTML.
  function highlight(text) {
    const dialect = dialectOf(text);
    const isC = dialect === "C" || dialect === "OPENCL";
    const token = /(\/\/[^\n]*|\(\*[\s\S]*?\*\)|\/\*[\s\S]*?\*\/)|("(?:[^"\\]|\\.)*"?)|(~?exists|forall|\/\\|\\\/|~)|(\bP\d+\b)|(\$?-?\b\d+\b)|(%?[A-Za-z_][\w.+]*)|([\s\S])/g;
    let out = "";
    let m;
    let first = true;
    while ((m = token.exec(text)) !== null) {
      const [whole, comment, str, cond, thread, num, word] = m;
      if (comment) {
        out += span("comment", whole);
      } else if (str) {
        out += span("string", whole);
      } else if (cond) {
        out += span("kw", whole);
      } else if (thread) {
        out += span("thread", whole);
      } else if (num) {
        out += span("num", whole);
      } else if (word) {
        if (first && ARCHS.has(word.toUpperCase())) {
          out += span("arch", whole);
        } else if (COND_KEYWORDS.has(word)) {
          out += span("kw", whole);
        } else if (!isC && PTX_OPS.test(word)) {
          const dot = word.indexOf(".");
          if (dot > 0) {
            out += span("op", word.slice(0, dot)) + span("qual", word.slice(dot));
          } else {
            out += span("op", word);
          }
        } else if (!isC && X86_OPS.has(word)) {
          out += span("op", word);
        } else if (!isC && X86_REGS.test(word)) {
          out += span("reg", word);
        } else if (/^%?r[a-z]?\d+$/.test(word)) {
          out += span("reg", word);
        } else if (isC && C_KEYWORDS.has(word)) {
          out += span("kw", word);
        } else if (isC && /^(atomic_\w+|memory_order_\w+|memory_scope_\w+|CLK_\w+|barrier|work_group_barrier)$/.test(word)) {
          out += span("op", word);
        } else {
          out += escapeHtml(whole);
        }
      } else {
        out += escapeHtml(whole);
      }
      if (whole.trim() !== "") first = false;
    }
    // A trailing newline needs a character after it to keep the height.
    return out + "\n";
  }

  // Builds an editor inside `root`; returns {get, set, focus, markLine, onChange}.
  function create(root) {
    root.innerHTML = "";
    const gutter = document.createElement("pre");
    gutter.className = "gutter";
    gutter.setAttribute("aria-hidden", "true");
    const pre = document.createElement("pre");
    pre.className = "hl";
    pre.setAttribute("aria-hidden", "true");
    const code = document.createElement("code");
    pre.appendChild(code);
    const ta = document.createElement("textarea");
    ta.spellcheck = false;
    ta.setAttribute("aria-label", "Litmus test");
    ta.setAttribute("autocapitalize", "off");
    ta.setAttribute("autocomplete", "off");
    ta.id = "source";
    const wrap = document.createElement("div");
    wrap.className = "editor-wrap";
    wrap.append(pre, ta);
    root.append(gutter, wrap);
    let marked = 0;
    const listeners = [];

    function render() {
      code.innerHTML = highlight(ta.value);
      const lines = ta.value.split("\n").length;
      let g = "";
      for (let i = 1; i <= lines; i++) {
        g += (i === marked ? `<span class="marked">${i}</span>` : String(i)) + "\n";
      }
      gutter.innerHTML = g;
      sync();
    }
    function sync() {
      pre.scrollTop = ta.scrollTop;
      pre.scrollLeft = ta.scrollLeft;
      gutter.scrollTop = ta.scrollTop;
    }
    ta.addEventListener("input", () => {
      marked = 0;
      render();
      listeners.forEach((f) => f());
    });
    ta.addEventListener("scroll", sync);
    ta.addEventListener("keydown", (e) => {
      if (e.key === "Tab" && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        const s = ta.selectionStart;
        ta.setRangeText("  ", s, ta.selectionEnd, "end");
        render();
      }
    });
    return {
      get: () => ta.value,
      set: (text) => { ta.value = text; marked = 0; render(); },
      focus: () => ta.focus(),
      // Marks a 1-based line (0: none) and puts the caret at line:col.
      markLine: (line, col) => {
        marked = line;
        render();
        if (line > 0) {
          const lines = ta.value.split("\n");
          let off = 0;
          for (let i = 0; i < line - 1 && i < lines.length; i++) off += lines[i].length + 1;
          off += Math.max(0, (col || 1) - 1);
          ta.focus();
          ta.setSelectionRange(off, off);
        }
      },
      onChange: (f) => listeners.push(f),
    };
  }

  return { create, highlight };
})();

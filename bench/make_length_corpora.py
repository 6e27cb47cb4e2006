#!/usr/bin/env python3
"""Real length distributions from text found on a Debian machine, for `evenfeed plan`.

  python3 bench/make_length_corpora.py OUTDIR

Writes one length per line (whitespace-separated words per document) for:
  code_files.txt         C/C++ headers, Python and CMake sources, one document per file
  doc_paragraphs.txt     paragraphs of man pages and /usr/share/doc texts
  changelog_entries.txt  entries of Debian package changelogs
  doc_sentences.txt      sentences of the same texts as doc_paragraphs (a sentence ends at
                         . ! or ? before a capital letter): short and smooth, like the
                         sentence pairs of translation corpora
  doc_files.txt          whole files of /usr/share/doc, man and info pages, one document per
                         file (binary files skipped): long-tailed like encyclopedia articles
  html_pages.txt         HTML pages of /usr/share/doc and of the first Rust toolchain's
                         documentation under ~/.rustup (when installed), tags, scripts and
                         styles stripped: many short index and redirect pages, a long tail
                         of reference pages, like crawled web text
Held out (added 2026-12-04, never used for tuning), written only where installed:
  java_sources.txt       .java files of one JDK's src.zip under /usr/lib/jvm (the last
                         by resolved path, so several JDKs do not repeat the classes)
  js_sources.txt         .js .mjs .cjs .ts files under /usr/lib/node_modules and
                         /usr/share/nodejs: a small corpus (about a thousand files)
  perl_sources.txt       .pm .pl .pod files of the Perl library: a small corpus
Held out (added 2026-12-06, thirty-fifth session, never used for tuning):
  sdk_sources.txt        .py files of the Google Cloud SDK under /usr/lib/google-cloud-sdk
                         (when installed): a mid-sized code corpus of another origin than
                         code_files' Python
  markup_docs.txt        .md .rst .tex files under /usr, /opt and the home directory (READMEs,
                         CMake's reStructuredText help, Python packages' docs): a small
                         corpus, mostly short, with a sparse tail of long manuals
Counts depend on what is installed; BENCHMARKS.md records the counts seen."""
import glob, gzip, os, re, sys, zipfile


def words(text):
    return len(text.split())


def read(path):
    try:
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        return raw.decode("utf-8", "replace")
    except Exception:
        return None


def files_under(roots, suffixes):
    """Words per file, for the files under `roots` whose names end in one of `suffixes`."""
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith(suffixes):
                    n = words(read(os.path.join(d, f)) or "")
                    if n:
                        yield n


def code_files():
    roots = ["/usr/include", "/usr/lib/python3"] + glob.glob("/usr/lib/python3.*") + glob.glob("/usr/share/cmake-*")
    yield from files_under(roots, (".h", ".hpp", ".hh", ".hxx", ".py", ".cmake"))


def doc_texts_paragraphs():
    """Paragraphs of man pages and /usr/share/doc texts (changelogs aside)."""
    for p in glob.glob("/usr/share/man/**/*.gz", recursive=True) + glob.glob("/usr/share/doc/**/*", recursive=True):
        if os.path.isdir(p) or "changelog" in p:
            continue
        yield from re.split(r"\n\s*\n", read(p) or "")


def doc_paragraphs():
    for para in doc_texts_paragraphs():
        if words(para):
            yield words(para)


def doc_sentences():
    for para in doc_texts_paragraphs():
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", para):
            if words(sentence):
                yield words(sentence)


def changelog_entries():
    for p in glob.glob("/usr/share/doc/*/changelog*.gz"):
        for entry in re.split(r"\n(?=\S+ \([^)]*\) )", read(p) or ""):
            if words(entry):
                yield words(entry)


def doc_files():
    for root in ("/usr/share/doc", "/usr/share/man", "/usr/share/info"):
        for d, _, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                if os.path.islink(p):
                    continue
                t = read(p)
                if t and "\0" not in t[:1000] and words(t):
                    yield words(t)


def html_pages():
    roots = ["/usr/share/doc"] + sorted(glob.glob(os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html")))[:1]
    for root in roots:
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith(".html"):
                    t = read(os.path.join(d, f)) or ""
                    t = re.sub(r"<script.*?</script>|<style.*?</style>", "", t, flags=re.S)
                    n = words(re.sub(r"<[^>]*>", " ", t))
                    if n:
                        yield n


def java_sources():
    archives = sorted(glob.glob("/usr/lib/jvm/*/lib/src.zip"), key=os.path.realpath)
    archives = [a for a in archives if os.path.exists(a)]
    if not archives:
        return
    with zipfile.ZipFile(archives[-1]) as z:
        for name in z.namelist():
            if name.endswith(".java"):
                n = words(z.read(name).decode("utf-8", "replace"))
                if n:
                    yield n


def js_sources():
    yield from files_under(["/usr/lib/node_modules", "/usr/share/nodejs"], (".js", ".mjs", ".cjs", ".ts"))


def perl_sources():
    roots = ["/usr/share/perl", "/usr/share/perl5"] + sorted(glob.glob("/usr/lib/x86_64-linux-gnu/perl*"))
    yield from files_under(roots, (".pm", ".pl", ".pod"))


def sdk_sources():
    yield from files_under(["/usr/lib/google-cloud-sdk"], (".py",))


def markup_docs():
    yield from files_under(["/usr", "/opt", os.path.expanduser("~")], (".md", ".rst", ".tex"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for name, gen in (("code_files", code_files), ("doc_paragraphs", doc_paragraphs),
                      ("changelog_entries", changelog_entries), ("doc_sentences", doc_sentences),
                      ("doc_files", doc_files), ("html_pages", html_pages),
                      ("java_sources", java_sources), ("js_sources", js_sources),
                      ("perl_sources", perl_sources), ("sdk_sources", sdk_sources),
                      ("markup_docs", markup_docs)):
        lengths = list(gen())
        if not lengths:
            print(f"{name}: none installed, not written")
            continue
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write("\n".join(map(str, lengths)) + "\n")
        s = sorted(lengths)
        print(f"{name}: {len(s)} documents, median {s[len(s) // 2]}, mean {sum(s) / len(s):.1f}, "
              f"p99 {s[int(len(s) * 0.99)]}, max {s[-1]}")


if __name__ == "__main__":
    main()

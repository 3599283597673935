#!/bin/sh
# Makes the tree the production image copies (infra/Dockerfile, build stage), in steps a test can run on
# a copy of a built checkout (tests/image-tree.test.ts):
#   build-image-tree.sh build   [DIR]  npm install, then compile every workspace (turbo)
#   build-image-tree.sh samples [DIR]  the sample data the loader indexes, into DIR/sample
#   build-image-tree.sh prune   [DIR]  drop dev dependencies, the workspaces' TypeScript sources and build info
#   build-image-tree.sh all     [DIR]  the three in that order (what the Dockerfile runs)
# DIR is the checkout's root, the current directory by default.
set -eu

step="${1:-all}"
cd "${2:-.}"

build() {
  npm install --no-audit --no-fund
  npx turbo run build
}

samples() {
  # vega-datasets is a dev dependency: copied out before prune removes it.
  mkdir -p sample
  cp node_modules/vega-datasets/data/movies.json node_modules/vega-datasets/data/airports.csv sample/
}

# Each workspace's folder, relative to the root, from npm's own view of the tree.
workspaces() {
  json=$(npm query .workspace)
  printf '%s' "$json" | node -e '
    let text = "";
    process.stdin.on("data", (d) => (text += d)).on("end", () => {
      for (const w of JSON.parse(text)) console.log(w.location);
    });'
}

prune() {
  npm prune --omit=dev --no-audit --no-fund
  list=$(workspaces)
  if [ -z "$list" ]; then
    echo "build-image-tree: npm lists no workspace in $(pwd)" >&2
    exit 1
  fi
  # Only the workspaces' own src folders. A `find -name src` over packages/ also reaches dependencies
  # installed inside a workspace (packages/rpc/node_modules/@grpc/proto-loader keeps its entry point in
  # build/src), and the image could not start.
  for ws in $list; do
    case "$ws" in
      /* | *..* | node_modules | node_modules/* | */node_modules | */node_modules/*)
        echo "build-image-tree: refusing workspace location $ws" >&2
        exit 1
        ;;
    esac
    rm -rf "$ws/src"
    find "$ws" -path "$ws/node_modules" -prune -o -type f -name '*.tsbuildinfo' -exec rm -f {} +
  done
}

case "$step" in
  build) build ;;
  samples) samples ;;
  prune) prune ;;
  all)
    build
    samples
    prune
    ;;
  *)
    echo "usage: build-image-tree.sh build|samples|prune|all [DIR]" >&2
    exit 2
    ;;
esac

# kinject's container image: a static kinject, the names of the two users it may run as, and
# nothing else (no shell, no libc to load, no package manager). Built by `scripts/image`, which
# builds the binary on the host first: no builder or base image is pulled. See
# docs/container-image.md.
FROM scratch

# A static kinject, relative to the build context (`scripts/image` passes the one it built).
ARG BINARY=target/x86_64-unknown-linux-gnu/release/kinject
# What `kinject --version` of that binary says, and the commit it was built from.
ARG VERSION=unknown
ARG REVISION=unknown

LABEL org.opencontainers.image.title="kinject" \
      org.opencontainers.image.description="Inject sidecar containers into Kubernetes manifests, offline, keeping your files as you wrote them" \
      org.opencontainers.image.source="https://github.com/kinject/kinject" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

# /etc/passwd and /etc/group name nonroot (65532, the image's user) and nobody (65534):
# kustomize runs a container function with `docker run --user nobody`, which fails on an
# image where that name means nothing.
COPY --chmod=0644 image/etc/passwd image/etc/group /etc/
COPY --chmod=0755 ${BINARY} /kinject

USER 65532:65532
ENTRYPOINT ["/kinject"]
# Given no arguments, as kustomize runs a container function, kinject is a KRM function: a
# ResourceList on stdin, one on stdout. Other arguments replace `krm`: the admission webhook
# server, `kinject serve` (docs/serve.md), runs from this same image.
CMD ["krm"]

# syntax=docker/dockerfile:1
#
# herald container image: a static binary on distroless/static (no libc,
# no shell), running as the non-root user 65532, with the embedded
# JetStream store on the /data volume.
#
#   docker build -t herald --build-arg VERSION=$(git describe --tags --always) .
#   docker run -p 8000:8000 -v herald-data:/data herald
#
# deploy/container_test.go builds the binaries with the exact `go build`
# lines below and runs them in an empty root filesystem; keep them in step.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static binaries (no cgo: pure-Go resolver and os/user), no local paths,
# no symbol tables; the version is stamped into main.version.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /out/herald .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o /out/healthcheck ./deploy/healthcheck
# The volume's mount point, owned by the runtime user so that a fresh named
# volume is writable.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="herald" \
      org.opencontainers.image.description="Aviso-compatible notification gateway" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/herald /usr/local/bin/herald
COPY --from=build /out/healthcheck /usr/local/bin/healthcheck
COPY --from=build --chown=65532:65532 /out/data /data
# herald looks for configs/config.yaml relative to its working directory
# when neither --config nor HERALD_CONFIG_FILE names a file.
WORKDIR /app
COPY configs/config.yaml /app/configs/config.yaml
# Its codec definitions (codecs.definitions is relative to the config file).
COPY configs/codecs/sensor.nspl /app/configs/codecs/sensor.nspl
# The shipped config binds 127.0.0.1 and stores under ./data/jetstream;
# in a container herald listens on every interface and stores on /data.
# Environment variables override the config file (HERALD_A__B=value).
ENV HERALD_APPLICATION__HOST=0.0.0.0 \
    HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=/data
USER 65532:65532
VOLUME ["/data"]
# 8000: the API (application.port). 9090: Prometheus metrics when enabled,
# e.g. -e HERALD_METRICS__ENABLED=true -e HERALD_METRICS__HOST=0.0.0.0
# -e HERALD_METRICS__PORT=9090 (metrics.port has no default).
EXPOSE 8000 9090
HEALTHCHECK --interval=10s --timeout=5s --start-period=15s --retries=3 \
    CMD ["/usr/local/bin/healthcheck"]
ENTRYPOINT ["/usr/local/bin/herald"]
CMD ["serve"]

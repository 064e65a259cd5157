// Package deploy holds the container deployment of herald: the compose
// cluster (compose.yaml with its nats.conf, herald.yaml and Caddyfile) and,
// in healthcheck/, the probe that the image's HEALTHCHECK runs. The
// Dockerfile and .dockerignore are at the repository root.
//
// The package has no code of its own. Its test checks what can be checked
// without a container runtime: the Dockerfile's static binaries run in an
// empty root filesystem, and the compose files parse and name only files,
// images and ports that exist and fit together.
package deploy

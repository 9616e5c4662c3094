// CLibCrypto: the system's libcrypto (OpenSSL 3, Debian libssl-dev) as a Swift module, for the manifest's SHA-256
// and Ed25519. Nothing but the headers.
#include <openssl/evp.h>
#include <openssl/rand.h>

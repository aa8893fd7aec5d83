/* HTTP/3 is not part of this build of uWebSockets.js: QUIC needs lsquic and BoringSSL, which
 * no registry package ships, and Portico serves HTTP/1.1 only. The addon's H3App wrapper
 * still refers to uSockets' QUIC functions, so each is defined here and ends the process
 * with a message if it is ever called (only `uWS.H3App()` reaches them). */

#include <stdio.h>
#include <stdlib.h>

#include "libusockets.h"
#include "quic.h"

static void no_http3(const char *fn) {
    fprintf(stderr, "uWebSockets.js: %s: HTTP/3 (uWS.H3App) is not part of this build\n", fn);
    abort();
}

void *us_quic_stream_ext(us_quic_stream_t *s) { no_http3(__func__); return NULL; }
int us_quic_stream_write(us_quic_stream_t *s, char *data, int length) { no_http3(__func__); return 0; }
int us_quic_stream_shutdown(us_quic_stream_t *s) { no_http3(__func__); return 0; }
int us_quic_stream_shutdown_read(us_quic_stream_t *s) { no_http3(__func__); return 0; }
void us_quic_stream_close(us_quic_stream_t *s) { no_http3(__func__); }
int us_quic_socket_context_get_header(us_quic_socket_context_t *context, int index, char **name, int *name_length, char **value, int *value_length) { no_http3(__func__); return 0; }
void us_quic_socket_context_set_header(us_quic_socket_context_t *context, int index, const char *key, int key_length, const char *value, int value_length) { no_http3(__func__); }
void us_quic_socket_context_send_headers(us_quic_socket_context_t *context, us_quic_stream_t *s, int num, int has_body) { no_http3(__func__); }
us_quic_socket_context_t *us_create_quic_socket_context(struct us_loop_t *loop, us_quic_socket_context_options_t options, int ext_size) { no_http3(__func__); return NULL; }
us_quic_listen_socket_t *us_quic_socket_context_listen(us_quic_socket_context_t *context, const char *host, int port, int ext_size) { no_http3(__func__); return NULL; }
us_quic_socket_t *us_quic_socket_context_connect(us_quic_socket_context_t *context, const char *host, int port, int ext_size) { no_http3(__func__); return NULL; }
void us_quic_socket_create_stream(us_quic_socket_t *s, int ext_size) { no_http3(__func__); }
us_quic_socket_t *us_quic_stream_socket(us_quic_stream_t *s) { no_http3(__func__); return NULL; }
int us_quic_stream_is_client(us_quic_stream_t *s) { no_http3(__func__); return 0; }
void us_quic_socket_context_on_stream_data(us_quic_socket_context_t *context, void (*cb)(us_quic_stream_t *s, char *data, int length)) { no_http3(__func__); }
void us_quic_socket_context_on_stream_end(us_quic_socket_context_t *context, void (*cb)(us_quic_stream_t *s)) { no_http3(__func__); }
void us_quic_socket_context_on_stream_headers(us_quic_socket_context_t *context, void (*cb)(us_quic_stream_t *s)) { no_http3(__func__); }
void us_quic_socket_context_on_stream_open(us_quic_socket_context_t *context, void (*cb)(us_quic_stream_t *s, int is_client)) { no_http3(__func__); }
void us_quic_socket_context_on_stream_close(us_quic_socket_context_t *context, void (*cb)(us_quic_stream_t *s)) { no_http3(__func__); }
void us_quic_socket_context_on_open(us_quic_socket_context_t *context, void (*cb)(us_quic_socket_t *s, int is_client)) { no_http3(__func__); }
void us_quic_socket_context_on_close(us_quic_socket_context_t *context, void (*cb)(us_quic_socket_t *s)) { no_http3(__func__); }
void us_quic_socket_context_on_stream_writable(us_quic_socket_context_t *context, void (*cb)(us_quic_stream_t *s)) { no_http3(__func__); }
void *us_quic_socket_context_ext(us_quic_socket_context_t *context) { no_http3(__func__); return NULL; }
us_quic_socket_context_t *us_quic_socket_context(us_quic_socket_t *s) { no_http3(__func__); return NULL; }

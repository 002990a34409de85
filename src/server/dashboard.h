// The web console `strata serve` answers at GET /dashboard: one
// self-contained page (HTML, CSS and script inline; no CDN, works offline)
// that calls the REST API from the browser. It embeds no data, so it is
// served without the API key; the page asks for the key and sends it as the
// `api-key` header.
#ifndef STRATA_SERVER_DASHBOARD_H_
#define STRATA_SERVER_DASHBOARD_H_

#include <string_view>

namespace strata::server {

// The page. Query parameters it reads: collection, id or vector (JSON list),
// limit: with collection and one of id/vector it runs that search on load.
// A `#key=...` fragment (never sent to the server) gives the API key.
std::string_view DashboardHtml();

}  // namespace strata::server

#endif  // STRATA_SERVER_DASHBOARD_H_

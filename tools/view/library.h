// The graph library the HTML pages of `amem view` embed (tools/view/view.cmake
// compiles it in from what tools/view/fetch_library.sh fetched): all three are
// empty when the build found none.
#ifndef AMEM_TOOLS_VIEW_LIBRARY_H_
#define AMEM_TOOLS_VIEW_LIBRARY_H_

#include <string_view>

namespace amem::view {

extern const std::string_view kLibraryName;     // "cytoscape@3.35.0"
extern const std::string_view kLibraryJs;       // its minified source
extern const std::string_view kLibraryLicense;  // its licence notice
extern const std::string_view kPageJs;  // tools/view/page.js, the page's own script

}  // namespace amem::view

#endif  // AMEM_TOOLS_VIEW_LIBRARY_H_

// Prints the settings table (maroon/settings.def) as Markdown: `maroon-settings` writes the
// README's settings section, and ctest checks that the README holds exactly this.
#include <iostream>

#include "maroon/settings.h"

int main() {
  std::cout << "| variable | values | default | what it does |\n|---|---|---|---|\n";
  for (const maroon::SettingInfo& s : maroon::all_settings())
    std::cout << "| `" << s.name << "` | " << s.values << " | " << s.default_value << " | " << s.doc << " |\n";
  return 0;
}
